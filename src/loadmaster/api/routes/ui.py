"""``/ui/``: the dashboard's static files (``api/ui/``: HTML, CSS and JavaScript modules; no third-party
code, nothing fetched from elsewhere).

Every ``/ui/...`` address that is not one of the files answers the page itself, so a deep link
(``/ui/replicas/shop-api-0``) opens that view; the page then reads everything from the JSON API with the
user's token (asked once, kept in the tab's session storage). The files carry no data, so they need no
token.
"""

from __future__ import annotations

from importlib.resources import files

from fastapi import APIRouter
from fastapi.responses import RedirectResponse, Response

router = APIRouter(tags=["dashboard"], include_in_schema=False)
_FILES = files("loadmaster.api") / "ui"
_TYPES = {".js": "text/javascript", ".css": "text/css", ".html": "text/html"}
_ASSETS = {entry.name for entry in _FILES.iterdir() if entry.name.endswith(tuple(_TYPES))}
# The page's scripts come from this server only: no inline script, nothing from elsewhere.
_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; style-src 'self'; img-src 'self' data:",
    "Cache-Control": "no-cache",
}


def _file(name: str) -> Response:
    suffix = name[name.rfind(".") :]
    return Response((_FILES / name).read_bytes(), media_type=_TYPES[suffix], headers=_HEADERS)


@router.get("/ui", include_in_schema=False)  # the dashboard's pages, not the API
async def ui_root() -> RedirectResponse:
    return RedirectResponse("/ui/")


@router.get("/ui/{path:path}", include_in_schema=False)
async def ui(path: str) -> Response:
    return _file(path) if path in _ASSETS else _file("index.html")
