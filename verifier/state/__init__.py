"""The project's state as the doors read it: the task board's leaf states and what became of a
leaf's objects, over a read-only tree view."""
