from ama.cli.main import main

raise SystemExit(main())
