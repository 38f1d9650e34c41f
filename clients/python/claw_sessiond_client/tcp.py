"""What a daemon's ``--tcp`` listener and its clients agree on: two files in ``.claw/``, a name, two variables.

The daemon writes its token and its certificate into the workspace's ``.claw/``
at each start (mode 0600); a client reads them from there (or from the files
the variables name) and checks that the certificate is issued to
:data:`SERVER_NAME`, whatever address it dials (docs/PROTOCOL.md "TCP"). The
daemon and the client import these names from here, so the two sides cannot
drift apart; the TypeScript client's ``tcp.ts`` exports the same five.
"""

from __future__ import annotations

from typing import Final

__all__ = ["CERT_ENV", "CERT_FILE", "SERVER_NAME", "TOKEN_ENV", "TOKEN_FILE"]

#: The daemon's token file inside ``.claw/``.
TOKEN_FILE: Final = "tcp-token"
#: The daemon's certificate (PEM) inside ``.claw/``.
CERT_FILE: Final = "tcp-cert.pem"
#: The name the daemon's certificate is issued to; clients check this name whatever address they dial.
SERVER_NAME: Final = "claw-sessiond"
#: Environment variable holding a token (used when no ``token=`` is passed).
TOKEN_ENV: Final = "CLAW_TOKEN"
#: Environment variable naming a file with the daemon's certificate.
CERT_ENV: Final = "CLAW_TLS_CERT"
