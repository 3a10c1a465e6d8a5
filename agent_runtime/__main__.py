import sys

from agent_runtime.main import main

sys.exit(main())
