# Operator-coverage section (after inventory.py, see lib.py): runs the capture harness
# (OPS_HARNESS, ops_trace.py) on the user's entry (AMW_OPS_ARGS) in a child Python with
# set_env.sh sourced, as the env checks do. Its output ends with one @@AMW-OPS@@ JSON line.
put("ops_trace", *python_check(OPS_HARNESS, 1800, {"AMW_OPS_ARGS": AMW_OPS_ARGS}, os.path.expanduser("~")))
