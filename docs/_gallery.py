"""``example-gallery``: a grid of the example notebooks, each shown by its
first figure and its title, linking to its page (``examples/index.md``).

The figures are outputs of the notebooks, executed while Sphinx reads them
(``nb_execution_mode`` in conf.py), so the grid is filled in at
``doctree-resolved``, after every page has been read: each card reuses the
first image node of the notebook's doctree (its file is already among the
images the HTML builder copies).  A notebook without a figure gets a card
without one.
"""
from __future__ import annotations

from docutils import nodes
from sphinx.util.docutils import SphinxDirective

NOTEBOOKS = "examples/notebooks/"


class gallery_placeholder(nodes.General, nodes.Element):
    """Where the grid goes; replaced at ``doctree-resolved``."""


class ExampleGallery(SphinxDirective):
    has_content = False

    def run(self):
        return [gallery_placeholder()]


def _first_image(doctree):
    return next(iter(doctree.findall(nodes.image)), None)


def _fill(app, doctree, docname):
    env = app.env
    for placeholder in list(doctree.findall(gallery_placeholder)):
        grid = nodes.container(classes=["numkfs-gallery"])
        for nbdoc in sorted(d for d in env.found_docs if d.startswith(NOTEBOOKS)):
            title = env.titles[nbdoc].astext() if nbdoc in env.titles else nbdoc
            image = _first_image(env.get_doctree(nbdoc))
            link = nodes.reference("", "", internal=True, refuri=app.builder.get_relative_uri(docname, nbdoc),
                                   classes=["numkfs-gallery-card"])
            if image is not None:
                thumb = nodes.image(uri=image["uri"], candidates=dict(image.get("candidates", {})),
                                    alt=f"first figure of {title}", classes=["numkfs-gallery-thumb"])
                link += thumb
            link += nodes.inline("", title, classes=["numkfs-gallery-title"])
            grid += nodes.paragraph("", "", link)
        placeholder.replace_self(grid)


def _index_outdated(app, env, added, changed, removed):
    """Rewrite the gallery page when a notebook changes (its figures may)."""
    if any(d.startswith(NOTEBOOKS) for d in (*added, *changed, *removed)):
        return [d for d in env.found_docs if d == "examples/index"]
    return []


def setup(app):
    app.add_node(gallery_placeholder)
    app.add_directive("example-gallery", ExampleGallery)
    app.connect("doctree-resolved", _fill)
    app.connect("env-get-outdated", _index_outdated)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
