# Profiling section (after inventory.py, see lib.py): runs the profiling harness (PROFILE_HARNESS,
# profile_run.py) on the user's entry (AMW_PROFILE_ARGS) in a child Python with set_env.sh sourced,
# as the env checks do. Its output ends with one @@AMW-PROFILE@@ JSON line.
put("profile_run", *python_check(PROFILE_HARNESS, 3600, {"AMW_PROFILE_ARGS": AMW_PROFILE_ARGS, "AMW_PROFILE_HARNESS_SRC": PROFILE_HARNESS}, os.path.expanduser("~")))
