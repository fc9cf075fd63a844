"""The web shell: the app factory, its routes, middleware and pages (FastAPI, Starlette)."""
