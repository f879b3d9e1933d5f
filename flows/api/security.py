"""Who is calling: the API key → tenant mapping, or the tenant header when auth is off.

Input: request headers. Output: the caller's tenant (`Caller`), or an `ApiError` (401 missing or
unknown key, 403 a tenant header that is not the key's tenant). State: the key table, built once
from settings (`serve.api_keys`: tenant → key). Keys are compared in constant time.

Auth modes (`serve.auth`): `required` — every data route needs a key; `off` — the tenant comes
from the tenant header (or `serve.default_tenant`), for the embedded, single-user mode; `auto` —
required when keys are configured or the store is a server, off otherwise. Probes (/healthz,
/readyz) and /metrics (aggregates only, no tenant label) never need a key.
"""

from __future__ import annotations

import hmac
from dataclasses import dataclass

from flows.api.errors import ApiError
from flows.settings import ServeSettings, Settings
from schemas.errors import ConfigurationError


@dataclass(frozen=True, slots=True)
class Caller:
    tenant_id: str
    authenticated: bool


def auth_required(settings: Settings) -> bool:
    """Resolve `serve.auth`; `required` with no key configured is a configuration error."""
    cfg = settings.serve
    if cfg.auth == "off":
        return False
    if cfg.auth == "required":
        if not cfg.api_keys:
            msg = 'serve.auth=required needs serve.api_keys (RECALLFLOW_SERVE__API_KEYS=\'{"tenant": "key"}\')'
            raise ConfigurationError(msg)
        return True
    return bool(cfg.api_keys) or settings.store.backend == "qdrant_server"


class KeyTable:
    """Resolves a request's headers to its tenant."""

    def __init__(self, cfg: ServeSettings, *, required: bool) -> None:
        if required and not cfg.api_keys:
            msg = "API key auth is required (store is a server) but serve.api_keys is empty"
            raise ConfigurationError(msg)
        self.required = required
        self._cfg = cfg
        self._keys = [(tenant, key.get_secret_value().encode()) for tenant, key in cfg.api_keys.items()]
        if any(not k for _, k in self._keys):
            raise ConfigurationError("serve.api_keys has an empty key")

    def _tenant_of(self, key: str) -> str | None:
        given = key.encode()
        found = None
        for tenant, secret in self._keys:  # no early exit: time does not depend on which key matched
            if hmac.compare_digest(given, secret):
                found = tenant
        return found

    def caller(self, api_key: str | None, tenant_header: str | None) -> Caller:
        if not self.required:
            tenant = (tenant_header or "").strip() or self._cfg.default_tenant
            if len(tenant) > 200:
                raise ApiError(400, "bad_tenant", "tenant header longer than 200 characters")
            return Caller(tenant, authenticated=False)
        if not api_key:
            raise ApiError(401, "missing_api_key", f"send the API key in the {self._cfg.api_key_header} header")
        owner = self._tenant_of(api_key)
        if owner is None:
            raise ApiError(401, "invalid_api_key", "the API key is not known")
        if tenant_header and tenant_header.strip() != owner:
            raise ApiError(403, "tenant_mismatch", "the tenant header does not match the API key's tenant")
        return Caller(owner, authenticated=True)
