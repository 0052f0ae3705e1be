"""The foundation every stage stands on: errors, records, config, the on-disk store, the doors to
subprocesses and git, worktrees, locks, interrupts and the thread pool. Imports nothing above it."""
