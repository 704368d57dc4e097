"""A TLS front for a simulated cluster with a certificate of the test's choosing: in-cluster config
always speaks https to KUBERNETES_SERVICE_HOST, with the service account's CA."""

from __future__ import annotations

import contextlib
import select
import socket
import ssl
import threading
from pathlib import Path

from gpuctl.sim.server.http_server import SimServer
from gpuctl.sim.server.tls import client_context, new_serving_certificate


def self_signed_certificate(folder: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 (its own CA, made as the sim makes its own) and its key,
    written to `folder`."""
    serving = new_serving_certificate()
    cert_path, key_path = folder / "tls.crt", folder / "tls.key"
    cert_path.write_bytes(serving.certificate_pem)
    key_path.write_bytes(serving.key_pem)
    return cert_path, key_path


class TlsProxy:
    """Accepts TLS on 127.0.0.1:`port` and relays each connection to the sim, over TLS trusting the
    sim's certificate. The sim is told to answer to Host headers naming this front's port; `token`
    is the sim's."""

    def __init__(self, server: SimServer, cert: Path, key: Path) -> None:
        self.backend_port = int(server.url.rsplit(":", 1)[1])
        self.token = server.token
        self.backend = client_context(server.certificate.certificate_pem)
        self.context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.context.load_cert_chain(cert, key)
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = int(self.listener.getsockname()[1])
        server.trust_front(self.port)
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return  # closed
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        try:
            secure = self.context.wrap_socket(client, server_side=True)
        except (ssl.SSLError, OSError):
            client.close()
            return
        backend = self.backend.wrap_socket(
            socket.create_connection(("127.0.0.1", self.backend_port)), server_hostname="127.0.0.1"
        )
        _relay(secure, backend)

    def close(self) -> None:
        self.listener.close()


def _relay(front: ssl.SSLSocket, back: ssl.SSLSocket) -> None:
    """Both directions in one thread: an SSL socket must not be read and written by two threads
    at once."""
    peers = {front: back, back: front}
    try:
        while True:
            ready = [end for end in peers if end.pending()] or select.select(list(peers), [], [])[0]
            for end in ready:
                # Readable may mean a TLS record with no data in it (a session ticket): a blocking
                # read would then wait while the other side has bytes to pass on.
                end.setblocking(False)
                try:
                    data = end.recv(65536)
                except ssl.SSLWantReadError:
                    continue
                finally:
                    end.setblocking(True)
                if not data:
                    return
                peers[end].sendall(data)
    except OSError:
        pass
    finally:
        for end in peers:
            with contextlib.suppress(OSError):
                end.close()
