# Precision section (after inventory.py, see lib.py): runs the dump harness (PRECISION_HARNESS,
# precision_dump.py) on the user's entry (AMW_PRECISION_ARGS) in a child Python with set_env.sh
# sourced, as the env checks do. Its output ends with one @@AMW-PRECISION@@ JSON line.
put("precision_dump", *python_check(PRECISION_HARNESS, 1800, {"AMW_PRECISION_ARGS": AMW_PRECISION_ARGS, "HCCL_DETERMINISTIC": os.environ.get("HCCL_DETERMINISTIC", "1")}, os.path.expanduser("~")))
