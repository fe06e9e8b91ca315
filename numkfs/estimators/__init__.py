"""scikit-learn estimators that call the methods in :mod:`numkfs.methods`.

One private module per method (``_knife.py``, ``_lpkta.py``, ...); this
package re-exports them.
"""
__all__: list[str] = []
