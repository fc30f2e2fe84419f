"""Running hostile parsers: contained workers, the LibreOffice guard and profile, external
references removed."""
