"""The tree view a check reads: the state room's `TreeView`, `Overlay` and `DictTree` under the
name the checks have always imported (verifier.state.view holds them)."""

from verifier.state.view import DictTree, Overlay, TreeView

__all__ = ["DictTree", "Overlay", "TreeView"]
