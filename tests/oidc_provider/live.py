"""The test identity provider as a live server for the sign-in tests: django-oauth-toolkit's
OIDC provider (this package's settings) in a second Django process on a loopback port, with an
RS256 key made here, its database in a temporary directory. `OIDC_SETTINGS` are the service's
settings that point at it."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
CLIENT_ID, CLIENT_SECRET = "campaign-desk", "s3cret-of-the-test-client"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _rsa_pem() -> str:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()


PORT = free_port()
OP = f"http://127.0.0.1:{PORT}/o"
OIDC_SETTINGS = {
    "OIDC_RP_CLIENT_ID": CLIENT_ID,
    "OIDC_RP_CLIENT_SECRET": CLIENT_SECRET,
    "OIDC_OP_AUTHORIZATION_ENDPOINT": f"{OP}/authorize/",
    "OIDC_OP_TOKEN_ENDPOINT": f"{OP}/token/",
    "OIDC_OP_USER_ENDPOINT": f"{OP}/userinfo/",
    "OIDC_OP_JWKS_ENDPOINT": f"{OP}/.well-known/jwks.json",
    "OIDC_OP_LOGOUT_ENDPOINT": f"{OP}/logout/",
    "OIDC_OP_ISSUER": OP,
    "OIDC_RP_SIGN_ALGO": "RS256",
    "AUTHENTICATION_BACKENDS": [
        "axes.backends.AxesStandaloneBackend",  # as config/settings.py installs them
        "ledger.views.sso.DeskOIDCBackend",
        "django.contrib.auth.backends.ModelBackend",
    ],
}


class Provider:
    """Start with the service's URL and USER:PASSWORD:GROUP|GROUP… specs; `stop()` after."""

    def __init__(self, service_url: str, users: list[str]) -> None:
        self.tmp = tempfile.mkdtemp(prefix="cd-oidc-")
        self.env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "tests.oidc_provider.settings",
            "OIDC_PROVIDER_DB": str(Path(self.tmp) / "provider.sqlite3"),
            "OIDC_PROVIDER_KEY": _rsa_pem(),
            "OIDC_PROVIDER_ISSUER": OP,
            "PYTHONPATH": str(ROOT),
        }
        self.env.pop("DATABASE_URL", None)
        self._setup(f"{service_url}/oidc/callback/", CLIENT_ID, CLIENT_SECRET, *users)
        (ROOT / "build").mkdir(exist_ok=True)
        with (ROOT / "build" / "test-oidc-provider.log").open("ab") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "django", "runserver", f"127.0.0.1:{PORT}", "--noreload"],
                cwd=ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT,
            )  # fmt: skip
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", PORT), timeout=1).close()
                return
            except OSError:
                time.sleep(0.3)
        self.stop()
        raise RuntimeError("the OIDC provider did not start")

    def _setup(self, *args: str) -> None:
        subprocess.run(
            [sys.executable, "tests/oidc_provider/setup_provider.py", *args],
            cwd=ROOT, env=self.env, check=True, timeout=120,
        )  # fmt: skip

    def disable(self, username: str) -> None:
        """The provider's account `username` can no longer sign in."""
        self._setup("--disable", username)

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=20)
        shutil.rmtree(self.tmp, ignore_errors=True)
