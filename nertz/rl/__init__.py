"""Learning to play: ``nertz train`` and the ``learned`` bot.

- :mod:`nertz.rl.policy`: the policy file (a small network's weights and what it was trained
  for, in one ``.npz``) and its forward pass in numpy, so playing needs no PyTorch;
- :mod:`nertz.rl.bot`: :class:`~nertz.rl.bot.LearnedBot`, the ``learned`` bot that plays a policy
  file from its seat's view, in the simulator and at the server;
- :mod:`nertz.rl.vec`: Stable-Baselines3's ``VecEnv`` over :class:`nertz.env.NertzVectorEnv`;
- :mod:`nertz.rl.train`: sb3-contrib's ``MaskablePPO`` against chosen opponents, its learning
  curve and the policy file.

Playing needs the ``ai`` extra (numpy, gymnasium); training the ``rl`` extra too
(``pip install -e '.[rl]'``: sb3-contrib and PyTorch for the CPU). docs/ai.md has the commands.
"""
