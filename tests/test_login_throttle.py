"""The login throttle: an attacker guessing a user name is slowed without locking out the real user.

The unit tests drive `ui.auth.LoginThrottle` with a settable clock and a client address per call.
The served tests start the real UI server with ASSISTANT_UI_AUTH on 127.0.0.1 and log in over
HTTP from two honest client addresses: 127.0.0.1 and 127.0.0.2 (the loopback network is
127.0.0.0/8, so a client socket can bind 127.0.0.2 as its source address). X-Forwarded-For is
believed only from an address in ASSISTANT_TRUSTED_PROXIES; otherwise it is a header anyone can
write, and must not give a guessing client a fresh address.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import pytest

from assistant import Settings
from tests.processes import free_port
from ui.auth import LoginThrottle

pytestmark = [pytest.mark.filterwarnings("ignore:.*no_silent_downcasting")]

USER, PASSWORD = "alice", "correct-horse"


@contextmanager
def calls_from(address: str | None) -> Iterator[None]:
    """Calls to the throttle inside this block come from `address`, as the served middleware sets it."""
    from ui.auth import client_address

    token = client_address.set(address)
    try:
        yield
    finally:
        client_address.reset(token)


def throttle(now: list[float]) -> LoginThrottle:
    return LoginThrottle(USER, PASSWORD, clock=lambda: now[0])


# --- the throttle, with a settable clock --------------------------------------------------------


def test_guesses_from_one_address_do_not_lock_out_the_right_password_from_another() -> None:
    now = [1000.0]
    login = throttle(now)
    with calls_from("203.0.113.7"):  # the guessing starts before the user comes
        assert not any(login(USER, f"early-{i}") for i in range(10))
    accepted = 0
    for round_ in range(21):
        with calls_from("203.0.113.7"):
            assert not login(USER, f"guess-{round_}a") and not login(USER, f"guess-{round_}b")
        with calls_from("198.51.100.9"):
            accepted += login(USER, PASSWORD)
        now[0] += 1.0
    assert accepted == 21
    with calls_from("203.0.113.7"):
        assert login.blocked_for(USER) > 0 and not login(USER, PASSWORD)  # the guesser is still slowed
    checked = 10 + 42 + 1 - login.refused
    assert checked <= 8  # in the 21 s, a doubling backoff let 8 of its 53 guesses be checked


def test_a_guessing_address_is_slowed_for_every_user_name() -> None:
    now = [1000.0]
    login = throttle(now)
    with calls_from("203.0.113.7"):
        for i in range(5):
            assert not login(f"user-{i}", "x")
        assert login.blocked_for("someone-else") == 2.0  # one address spraying names is slowed too
    with calls_from("198.51.100.9"):
        assert login.blocked_for("someone-else") == 0 and login(USER, PASSWORD)


def test_an_attack_from_many_addresses_gets_one_guess_each_once_the_name_is_guarded() -> None:
    from ui.auth import NAME_FREE_FAILURES

    now = [1000.0]
    login = throttle(now)
    for n in range(NAME_FREE_FAILURES):  # one guess each from many addresses: none is blocked by itself
        with calls_from(f"10.0.{n // 250}.{n % 250}"):
            assert not login(USER, f"guess-{n}")
    with calls_from("10.0.0.1"):  # an address that failed before: the guarded name refuses it unchecked
        refused = login.refused
        assert not login(USER, PASSWORD) and login.refused == refused + 1
    with calls_from("10.9.9.9"):  # an address that never failed is still checked, and the right password gets in
        assert login.blocked_for(USER) == 0 and login(USER, PASSWORD)
    with calls_from("10.9.9.8"):
        assert not login(USER, "wrong")  # checked: one guess for a fresh address ...
        assert login.blocked_for(USER) > 0  # ... and then it waits


def test_addresses_in_one_ipv6_64_count_as_one_client() -> None:
    now = [1000.0]
    login = throttle(now)
    for n in range(5):
        with calls_from(f"2001:db8:1:2::{n + 1:x}"):
            assert not login(USER, f"guess-{n}")
    with calls_from("2001:db8:1:2:ffff::1"):
        assert login.blocked_for(USER) > 0  # a /64 holds 2**64 addresses: not 2**64 fresh clients
    with calls_from("2001:db8:1:3::1"):
        assert login.blocked_for(USER) == 0 and login(USER, PASSWORD)


def test_failures_are_forgotten_after_a_quiet_hour_and_what_is_remembered_is_bounded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import ui.auth

    now = [1000.0]
    login = throttle(now)
    with calls_from("203.0.113.7"):
        for i in range(7):
            login(USER, f"guess-{i}")
        assert login.blocked_for(USER) > 0
        now[0] += ui.auth.FORGET_AFTER + 1
        assert login.blocked_for(USER) == 0 and login(USER, PASSWORD)
    monkeypatch.setattr(ui.auth, "MAX_TRACKED", 50)
    with calls_from("203.0.113.8"):
        for i in range(200):
            login("x" * 100_000 + str(i), "guess")  # 100 KB user names, each a new one
    assert login.tracked() <= 50
    assert login.tracked_bytes() < 50 * 1000  # names are kept as fixed-size digests, not as sent


# --- the served login: two real client addresses on the loopback network -----------------------


def client_at(address: str) -> httpx.Client:
    """An HTTP client whose connections leave from `address` (any of 127.0.0.0/8 on Linux)."""
    return httpx.Client(transport=httpx.HTTPTransport(local_address=address), timeout=10)


def log_in(client: httpx.Client, url: str, password: str, forwarded_for: str | None = None) -> bool:
    headers = {"X-Forwarded-For": forwarded_for} if forwarded_for else {}
    response = client.post(url + "login", data={"username": USER, "password": password}, headers=headers)
    assert response.status_code in (200, 400), response.status_code
    return response.status_code == 200


@pytest.fixture
def served_login(seed_settings: Settings, monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., Any]]:
    """Start the UI server with login on; yields a starter taking extra settings."""
    from ui.app import serve

    monkeypatch.setattr("ui.auth.BASE_DELAY", 120.0)  # blocks outlast each test, however slow the machine
    apps = []

    def start(**changes: Any) -> Any:
        app = serve(seed_settings.with_(ui_auth=f"{USER}:{PASSWORD}", **changes), "127.0.0.1", free_port(), block=False)
        apps.append(app)
        return app

    yield start
    for app in apps:
        app.close()


@pytest.mark.server
def test_the_served_login_lets_the_user_in_while_another_address_guesses(served_login: Callable[..., Any]) -> None:
    app = served_login()
    url = app.local_url
    with client_at("127.0.0.2") as attacker, client_at("127.0.0.1") as user:
        for i in range(10):  # the guessing starts before the user comes
            assert not log_in(attacker, url, f"early-{i}")
        accepted = 0
        for i in range(21):
            assert not log_in(attacker, url, f"guess-{i}a") and not log_in(attacker, url, f"guess-{i}b")
            accepted += log_in(user, url, PASSWORD)
        assert accepted == 21
        assert not log_in(attacker, url, PASSWORD)  # the guessing address is still blocked
    # five guesses checked; the rest, and then the right password, refused unchecked
    assert app.auth.refused == 10 + 42 - 5 + 1


@pytest.mark.server
def test_a_written_x_forwarded_for_gives_a_guessing_client_no_fresh_address(served_login: Callable[..., Any]) -> None:
    app = served_login()
    url = app.local_url
    with client_at("127.0.0.1") as attacker:
        for i in range(10):
            assert not log_in(attacker, url, f"guess-{i}", forwarded_for=f"198.51.100.{i + 1}")
        assert not log_in(attacker, url, PASSWORD, forwarded_for="192.0.2.77")  # still the same, blocked client
    assert app.auth.refused == 10 - 5 + 1
    with client_at("127.0.0.2") as user:
        assert log_in(user, url, PASSWORD)


@pytest.mark.server
def test_behind_a_trusted_proxy_its_x_forwarded_for_names_the_client(served_login: Callable[..., Any]) -> None:
    app = served_login(trusted_proxies=("127.0.0.1",))
    url = app.local_url
    with client_at("127.0.0.1") as proxy, client_at("127.0.0.2") as elsewhere:
        for i in range(8):
            assert not log_in(proxy, url, f"guess-{i}", forwarded_for="203.0.113.7")
        assert log_in(proxy, url, PASSWORD, forwarded_for="198.51.100.9")  # another client behind the proxy
        assert not log_in(proxy, url, PASSWORD, forwarded_for="203.0.113.7")  # the guesser stays blocked
        # a spoofed first hop is ignored: the proxy appends the address it saw, and that one counts
        assert not log_in(proxy, url, PASSWORD, forwarded_for="198.51.100.9, 203.0.113.7")
        # 127.0.0.2 is not a trusted proxy: its header is ignored, it is a client of its own
        for i in range(6):
            assert not log_in(elsewhere, url, f"other-{i}", forwarded_for="198.51.100.9")
    with client_at("127.0.0.1") as proxy:
        assert log_in(proxy, url, PASSWORD, forwarded_for="198.51.100.9")


def test_a_malformed_trusted_proxy_list_stops_with_one_line() -> None:
    from assistant.errors import SettingsError

    with pytest.raises(SettingsError, match="ASSISTANT_TRUSTED_PROXIES") as caught:
        Settings.from_env({"ASSISTANT_TRUSTED_PROXIES": "127.0.0.1, not-an-address"})
    assert "\n" not in str(caught.value)
    assert Settings.from_env({"ASSISTANT_TRUSTED_PROXIES": "10.0.0.0/8, ::1"}).trusted_proxies == ("10.0.0.0/8", "::1")
