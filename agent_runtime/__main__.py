from agent_runtime.main import main
from contracts.ipc.eventloop import exit_now

# Once main() returns the session is over and all it leaves behind is written: the interpreter's
# teardown would only keep the client that waits for this process's exit waiting.
exit_now(main())
