"""Point the book's launch buttons at the notebooks that live in the repository.

The book renders the papermill-executed copies in ``book/executed/``, which are build products and
not committed; sphinx-book-theme builds its Colab link from the page's own path, so it would open
a file that does not exist on GitHub. This extension rewrites those links to the committed twin
``notebooks/<name>.ipynb``. It runs after the theme's ``add_launch_buttons`` (priority 501).
"""

from __future__ import annotations

from pathlib import Path

EXECUTED_DIR = "book/executed/"
SOURCE_DIR = "notebooks/"


def _rewrite(buttons: list, has_source: bool) -> list:
    kept = []
    for button in buttons:
        if button.get("type") == "group":
            button["buttons"] = _rewrite(button.get("buttons", []), has_source)
            if not button["buttons"]:
                continue
        elif "url" in button and EXECUTED_DIR in button["url"]:
            if not has_source:  # a generated page (the status page): nothing to open
                continue
            button["url"] = button["url"].replace(EXECUTED_DIR, SOURCE_DIR)
        kept.append(button)
    return kept


def rewrite_launch_buttons(app, pagename, templatename, context, doctree) -> None:
    name = pagename.rsplit("/", 1)[-1]
    has_source = (Path(app.confdir) / SOURCE_DIR / f"{name}.ipynb").exists()
    if "header_buttons" in context:
        context["header_buttons"] = _rewrite(context["header_buttons"], has_source)


def setup(app):
    app.connect("html-page-context", rewrite_launch_buttons, priority=502)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
