"""Point the book's launch buttons at the notebooks that live in the repository.

The book renders the papermill-executed copies in ``book/executed/``, which are build products and
not committed; sphinx-book-theme builds its Colab link from the page's own path, so it would open
a file that does not exist on GitHub. This extension rewrites those links to the committed twin
``notebooks/<name>.ipynb``. It runs after the theme's ``add_launch_buttons`` (priority 501).
"""

from __future__ import annotations

EXECUTED_DIR = "book/executed/"
SOURCE_DIR = "notebooks/"


def _rewrite(buttons: list) -> None:
    for button in buttons:
        if button.get("type") == "group":
            _rewrite(button.get("buttons", []))
        elif "url" in button and EXECUTED_DIR in button["url"]:
            button["url"] = button["url"].replace(EXECUTED_DIR, SOURCE_DIR)


def rewrite_launch_buttons(app, pagename, templatename, context, doctree) -> None:
    _rewrite(context.get("header_buttons", []))


def setup(app):
    app.connect("html-page-context", rewrite_launch_buttons, priority=502)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
