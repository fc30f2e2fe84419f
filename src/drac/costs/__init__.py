"""Token and dollar accounting: the price table and the cost report behind `drac cost`."""
