"""Whether the UI can listen on a host and port, read before Gradio is imported or anything is loaded: a
port in use is one line at once, not after the seconds an import of the UI takes."""

from __future__ import annotations

import errno
import socket

from assistant import SettingsError


def port_in_use(host: str, port: int) -> str:
    return (
        f"Port {port} on {host} is in use (another assistant serve?) - stop it, "
        f"or pick another port: assistant serve --port {port + 1 if port < 65535 else 7860} (or ASSISTANT_PORT)"
    )


def check_port(host: str, port: int) -> None:
    """Raise a one-line SettingsError when `host:port` cannot be listened on (bound as uvicorn binds it)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as error:
        raise SettingsError(f"Cannot listen on {host}: {error.strerror} - fix --host (ASSISTANT_HOST)") from None
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError as error:
            if error.errno == errno.EADDRINUSE:
                raise SettingsError(port_in_use(host, port)) from None
            reason = error.strerror or type(error).__name__
            raise SettingsError(
                f"Cannot listen on {host}:{port} ({reason}) - pick another --host/--port "
                "(ASSISTANT_HOST, ASSISTANT_PORT); ports below 1024 need root"
            ) from None
