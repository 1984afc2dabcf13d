"""A socket guard: any network attempt beyond loopback fails the test.

The SDK tests drive real AWS clients (botocore, the SageMaker Python SDK) with dummy
credentials. Nothing they do may leave this machine: no AWS endpoint, no instance metadata
service (169.254.169.254, which botocore's credential chain tries), no SDK telemetry
(SDK v2 sends a GET to an S3 bucket after every instrumented call), no DNS.

Raising is not enough on its own: SDK v2's telemetry and botocore's credential fetchers
SWALLOW exceptions, so a blocked attempt would go unnoticed. The guard therefore also
RECORDS every attempt, and the fixtures fail the test at teardown when anything was
recorded. Loopback (127.0.0.0/8, ::1, ``localhost``) and Unix sockets stay allowed so that
local test servers (moto) keep working.

Use the ``no_network`` fixture (function scope) or ``module_no_network`` (module scope,
for a module that imports an SDK once). ``guard.probe()`` proves the guard is live.
"""

from __future__ import annotations

import contextlib
import ipaddress
import socket
from typing import Any, Iterator

import pytest

#: TEST-NET-1 (RFC 5737): documentation-only addresses, never routed. The probe's attempt is
#: refused by the guard before any packet could be built.
PROBE_ADDRESS = ("192.0.2.1", 443)


class NetworkBlocked(OSError):
    """Raised instead of opening a connection; an OSError so clients treat it as 'no network'."""


def is_loopback(host: Any) -> bool:
    if isinstance(host, bytes):
        host = host.decode("ascii", "replace")
    if not isinstance(host, str):
        return False
    host = host.strip("[]").split("%", 1)[0].lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class NetGuard:
    """Patches the socket module; records and refuses every non-loopback attempt."""

    def __init__(self) -> None:
        self.blocked: list[str] = []
        self.active = False

    def _refuse(self, what: str, host: Any, port: Any) -> None:
        attempt = f"{what} {host}:{port}"
        self.blocked.append(attempt)
        raise NetworkBlocked(f"tests/_net_guard.py blocked {attempt}")

    def install(self, mp: pytest.MonkeyPatch) -> "NetGuard":
        guard = self
        real_connect = socket.socket.connect
        real_connect_ex = socket.socket.connect_ex
        real_sendto = socket.socket.sendto
        real_getaddrinfo = socket.getaddrinfo
        real_create_connection = socket.create_connection

        def _address_allowed(sock: socket.socket, address: Any) -> bool:
            if getattr(socket, "AF_UNIX", None) is not None and sock.family == socket.AF_UNIX:
                return True
            return isinstance(address, tuple) and is_loopback(address[0])

        def connect(sock: socket.socket, address: Any) -> Any:
            if not _address_allowed(sock, address):
                guard._refuse("connect", *_host_port(address))
            return real_connect(sock, address)

        def connect_ex(sock: socket.socket, address: Any) -> Any:
            if not _address_allowed(sock, address):
                guard._refuse("connect_ex", *_host_port(address))
            return real_connect_ex(sock, address)

        def sendto(sock: socket.socket, data: Any, *args: Any) -> Any:
            address = args[-1]
            if not _address_allowed(sock, address):
                guard._refuse("sendto", *_host_port(address))
            return real_sendto(sock, data, *args)

        def getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
            # A name lookup is itself traffic (DNS); numeric loopback and None (bind) are fine.
            if host is not None and not is_loopback(host):
                guard._refuse("getaddrinfo", host, port)
            return real_getaddrinfo(host, port, *args, **kwargs)

        def create_connection(address: Any, *args: Any, **kwargs: Any) -> Any:
            if not is_loopback(address[0]):
                guard._refuse("create_connection", *_host_port(address))
            return real_create_connection(address, *args, **kwargs)

        mp.setattr(socket.socket, "connect", connect)
        mp.setattr(socket.socket, "connect_ex", connect_ex)
        mp.setattr(socket.socket, "sendto", sendto)
        mp.setattr(socket, "getaddrinfo", getaddrinfo)
        mp.setattr(socket, "create_connection", create_connection)
        self.active = True
        return self

    def probe(self) -> bool:
        """True when a connection to a non-loopback address is refused right now.

        The probe's own attempt is not kept as a violation."""
        before = len(self.blocked)
        try:
            sock = socket.create_connection(PROBE_ADDRESS, timeout=0.01)
        except NetworkBlocked:
            del self.blocked[before:]
            return True
        except OSError:  # not ours: the guard is not installed
            return False
        sock.close()
        return False

    def assert_clean(self) -> None:
        if self.blocked:
            pytest.fail("network attempts were made (and blocked): " + "; ".join(self.blocked), pytrace=False)


def _host_port(address: Any) -> tuple[Any, Any]:
    if isinstance(address, tuple) and len(address) >= 2:
        return address[0], address[1]
    return address, None


@contextlib.contextmanager
def guarded() -> Iterator[NetGuard]:
    """The guard for a ``with`` block; fails on exit if anything was attempted."""
    with pytest.MonkeyPatch.context() as mp:
        guard = NetGuard().install(mp)
        try:
            yield guard
        finally:
            guard.active = False
        guard.assert_clean()


@pytest.fixture
def no_network() -> Iterator[NetGuard]:
    with guarded() as guard:
        yield guard


@pytest.fixture(scope="module")
def module_no_network() -> Iterator[NetGuard]:
    with guarded() as guard:
        yield guard
