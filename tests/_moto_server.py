"""moto's server on a free loopback port, for the tests that read an account (one copy of how)."""

from __future__ import annotations

import logging
import urllib.request
from contextlib import contextmanager
from typing import Iterator


@contextmanager
def moto_server(*, reset: bool = False) -> Iterator[str]:
    """Yield the endpoint URL of a moto server on 127.0.0.1; stop it afterwards.

    ``reset``: moto's backends live in the process and are shared by every server it starts, so a
    module whose output depends on the account holding nothing else starts from a reset.
    """
    from moto.server import ThreadedMotoServer  # a test dependency: a missing one fails, never skips

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    _, port = server.get_host_and_port()
    url = f"http://127.0.0.1:{port}"
    try:
        if reset:
            urllib.request.urlopen(urllib.request.Request(f"{url}/moto-api/reset", method="POST"), timeout=30).close()
        yield url
    finally:
        server.stop()


@contextmanager
def account_env(url: str, *, region: str = "us-east-1") -> Iterator[None]:
    """The standard AWS variables pointed at the endpoint (test credentials, no profile), restored afterwards:
    the commands under test find the endpoint the way a user's shell gives it, never through a flag of ours."""
    import os

    keys = ("AWS_ENDPOINT_URL", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_REGION", "AWS_PROFILE", "AWS_DEFAULT_REGION")
    saved = {k: os.environ.get(k) for k in keys}
    os.environ.update(AWS_ENDPOINT_URL=url, AWS_ACCESS_KEY_ID="testing", AWS_SECRET_ACCESS_KEY="testing", AWS_REGION=region)
    os.environ.pop("AWS_PROFILE", None)
    os.environ.pop("AWS_DEFAULT_REGION", None)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
