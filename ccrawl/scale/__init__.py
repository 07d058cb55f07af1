"""Running ccrawl under the engines people already run: Slurm arrays, Kubernetes Indexed Jobs, torchrun-style ranks.

:mod:`.engine` turns ``--shard auto`` into this task's index and count, read from the engine's environment.
"""
