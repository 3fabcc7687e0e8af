"""MLflow's error shape: `{"error_code": "...", "message": "..."}` with the HTTP status its
client expects. 400/403/404 are raised straight into the training code; the client retries
only 408/429/5xx, so a refusal never loops."""

from __future__ import annotations

STATUS = {
    "INVALID_PARAMETER_VALUE": 400,
    "RESOURCE_ALREADY_EXISTS": 400,
    # MLflow's own server answers 500 for INVALID_STATE; a stopped run must not be retried, so
    # this facade answers 400 (docs/mlflow.md).
    "INVALID_STATE": 400,
    "PERMISSION_DENIED": 403,
    "UNAUTHENTICATED": 401,
    "RESOURCE_DOES_NOT_EXIST": 404,
    "ENDPOINT_NOT_FOUND": 404,
    "RESOURCE_EXHAUSTED": 413,
}


class MlflowError(Exception):
    def __init__(self, code: str, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.status = status or STATUS.get(code, 400)

    def body(self) -> dict[str, str]:
        return {"error_code": self.code, "message": self.message}
