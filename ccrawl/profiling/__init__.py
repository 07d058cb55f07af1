"""CPU and heap profiles per process of a run, named by role, and the tools to read and diff them.

A run given ``--profile-dir DIR --profile-name NAME`` writes, for every process by its role
(feeder, fetch-0, extract-1, write-0, ...):

- ``NAME.<role>.collapsed``: py-spy's collapsed stacks (``frame;frame;leaf count``),
- ``NAME.<role>.pb.gz``: the same samples as a pprof profile (``go tool pprof`` reads it),
- ``NAME.<role>.memray``: a memray heap capture (``memray flamegraph`` / ``memray stats``),
- ``NAME.manifest.json``: version, argv, each role's pid, start and end, and what was written.

``python -m ccrawl.profiling diff DIR_A/NAME_A DIR_B/NAME_B`` compares two runs role by role.
"""
