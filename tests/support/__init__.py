"""Test helpers: the shared world, real servers on loopback, scripted agents and workers, the
in-memory project repository and the project simulator. Tests and scripts import from here;
nothing here imports a test module or conftest."""
