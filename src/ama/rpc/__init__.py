"""Machine interfaces: the JSON-lines RPC mode (``ama --mode rpc``), its client, ACP mode."""
