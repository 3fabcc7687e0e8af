"""Plain Django views of the ledger: closing reports in the browser (`report_pages`) and single
sign-on (`sso`: the OIDC backend, its callback, API tokens, signing out)."""
