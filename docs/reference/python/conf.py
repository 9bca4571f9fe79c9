# The Python API reference, generated from the docstrings of the installed `maroon` package
# (Sphinx autodoc; Debian's python3-sphinx): `bash tools/docs.sh` writes build/docs/python/.
import maroon

project = "Maroon"
release = version = maroon.__version__
extensions = ["sphinx.ext.autodoc", "sphinx.ext.napoleon", "sphinx.ext.doctest"]
autodoc_member_order = "bysource"
autodoc_default_options = {"members": True, "undoc-members": True, "show-inheritance": True}
autodoc_typehints = "signature"
napoleon_google_docstring = True
html_theme = "alabaster"
html_title = f"Maroon {release}: Python API"
