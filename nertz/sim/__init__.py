"""The simulator: bots play many rounds on the engine, on a virtual clock.

- :mod:`nertz.sim.table`: one round, actions in time order, races, resets, the grace window;
- :mod:`nertz.sim.runner`: paired deals with rotated seats, worker processes, the progress bar;
- :mod:`nertz.sim.stats`: win shares with intervals, points, call and blocked rates;
- :mod:`nertz.sim.plots`: PNG charts (matplotlib, optional);
- :mod:`nertz.sim.cli`: the ``nertz simulate`` command.
"""
