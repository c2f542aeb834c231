"""The Lambda handlers, one directory each (``<name>/app.py``). Installed as the package
``papersift_functions`` so the local runner finds them outside a checkout too."""
