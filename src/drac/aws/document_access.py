"""Credentials that reach one document: what a converter (Normalise, ReadSpreadsheet, Render,
ReadScans) uses instead of its role's own.

A converter's role may only assume the stack's converter-access role. At the start of each
invocation the converter assumes it with a session policy naming exactly the objects it reads
(its document's upload or PDF) and the keys it writes (its document's artefacts); the
session's permissions are the intersection of the access role's policy and the session policy
(IAM User Guide, "Session policies"), so a parser exploit in one document holds nothing that
reaches another's.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from drac.errors import DocumentError

SESSION_POLICY_LIMIT = 2048
"""AssumeRole: "The plaintext that you use for both inline and managed session policies can't
exceed 2,048 characters" (STS API Reference, AssumeRole, Policy)."""

SESSION_SECONDS = 900
"""AssumeRole's smallest DurationSeconds (900 seconds); a converter's invocation outlives it
only past 15 minutes, which is every converter's Lambda timeout at most."""

READ_ACTIONS = ("s3:GetObject", "s3:GetObjectVersion")
WRITE_ACTIONS = ("s3:PutObject",)
_WILDCARDS = re.compile(r"[*?$]")
_SESSION_NAME = re.compile(r"[^\w+=,.@-]")


@dataclass(frozen=True)
class DocumentScope:
    """What one invocation may touch: objects it reads (bucket, exact key) and key patterns it
    writes (bucket, key or `prefix/*`) in the artifacts bucket."""

    reads: tuple[tuple[str, str], ...]
    writes: tuple[tuple[str, str], ...]


def exact_key(key: str) -> str:
    """A key as an IAM resource pattern that names it and no other key of another prefix: IAM
    has no escape for `*` and `?` in a Resource, so each wildcard character of the key (and
    `$`, which starts a policy variable) matches only one character in its own place."""
    return _WILDCARDS.sub("?", key)


def session_policy(scope: DocumentScope, partition: str = "aws") -> str:
    """The session policy of one document's scope, as compact JSON; DocumentError when it is
    over AssumeRole's 2,048-character limit (a key of about 1,500 characters)."""
    statements = []
    if scope.reads:
        statements.append(
            {
                "Effect": "Allow",
                "Action": list(READ_ACTIONS),
                "Resource": [f"arn:{partition}:s3:::{b}/{exact_key(k)}" for b, k in scope.reads],
            }
        )
    if scope.writes:
        statements.append(
            {
                "Effect": "Allow",
                "Action": list(WRITE_ACTIONS),
                "Resource": [f"arn:{partition}:s3:::{b}/{k}" for b, k in scope.writes],
            }
        )
    policy = json.dumps({"Version": "2012-10-17", "Statement": statements}, separators=(",", ":"))
    if len(policy) > SESSION_POLICY_LIMIT:
        raise DocumentError(
            f"the document's key is too long for a per-document session policy ({len(policy)}"
            f" characters, AssumeRole allows {SESSION_POLICY_LIMIT})"
        )
    return policy


def session_name(document_id: str) -> str:
    """The role session's name (in CloudTrail): the document id, in the characters and the
    64-character length AssumeRole allows."""
    return ("drac-" + _SESSION_NAME.sub("-", document_id))[:64]
