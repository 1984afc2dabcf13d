"""S3 bucket names and ``s3://`` URIs (PURE).

Amazon S3 User Guide, "General purpose bucket naming rules": 3 to 63 characters; lowercase
letters, digits, dots and hyphens; beginning and ending with a letter or digit; no two adjacent
dots; not formatted as an IP address; not starting with ``xn--`` or ``sthree-``; not ending with
``-s3alias`` (access point aliases) or ``--ol-s3`` (Object Lambda access point aliases).

The same page reserves more affixes for NEW buckets (``amzn-s3-demo-``, ``.mrap``, ``--x-s3``,
``--table-s3``); they are not checked here, because the names are checked on buckets that
already exist, and a bucket made before a reservation may carry one (UNCONFIRMED either way).
Buckets made in us-east-1 before March 1, 2018 could also have uppercase letters and
underscores (the page's legacy rules); such a name is refused here, as FSx data repositories
and SageMaker URIs address buckets by the current rules.
"""

from __future__ import annotations

import re
from typing import Any, Optional

BUCKET_NAME_LENGTH = (3, 63)
_CHARACTERS = re.compile(r"[a-z0-9][a-z0-9.-]*[a-z0-9]")
_IP_ADDRESS = re.compile(r"[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+")
RESERVED_PREFIXES = ("xn--", "sthree-")
RESERVED_SUFFIXES = ("-s3alias", "--ol-s3")


def bucket_name_problem(name: Any) -> Optional[str]:
    """What S3 refuses in ``name`` as a general purpose bucket name (None: nothing); the text
    completes ``<setting> <name> ...``."""
    low, high = BUCKET_NAME_LENGTH
    if not isinstance(name, str):
        return f"must be an S3 bucket name (a str), got {type(name).__name__}"
    if not low <= len(name) <= high:
        return f"is {len(name)} characters; an S3 bucket name has {low} to {high}"
    if not _CHARACTERS.fullmatch(name):
        return ("may hold only lowercase letters, digits, dots and hyphens, and must start and end with a letter "
                "or digit")
    if ".." in name:
        return "has two adjacent dots, which an S3 bucket name may not"
    if _IP_ADDRESS.fullmatch(name):
        return "is formatted as an IP address, which an S3 bucket name may not be"
    for prefix in RESERVED_PREFIXES:
        if name.startswith(prefix):
            return f"starts with {prefix!r}, a prefix S3 reserves"
    for suffix in RESERVED_SUFFIXES:
        if name.endswith(suffix):
            return f"ends with {suffix!r}, a suffix S3 reserves for access point aliases"
    return None


def is_bucket_name(name: Any) -> bool:
    return bucket_name_problem(name) is None


def split_s3_uri(uri: Any) -> Optional[tuple[str, str]]:
    """``s3://bucket/key/prefix`` -> ``("bucket", "key/prefix")`` when the bucket name is one S3
    accepts; None otherwise (no scheme, no ``/`` after the bucket, a bad bucket name)."""
    if not isinstance(uri, str) or not uri.startswith("s3://"):
        return None
    bucket, slash, key = uri.removeprefix("s3://").partition("/")
    return (bucket, key) if slash and is_bucket_name(bucket) else None


__all__ = ["BUCKET_NAME_LENGTH", "RESERVED_PREFIXES", "RESERVED_SUFFIXES", "bucket_name_problem", "is_bucket_name",
           "split_s3_uri"]
