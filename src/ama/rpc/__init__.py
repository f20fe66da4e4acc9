"""Machine interfaces: the JSON-lines RPC mode (``ama --mode rpc``), its client, ACP mode."""


def __getattr__(name: str):  # ama.rpc.RpcClient without importing it eagerly
    if name == "RpcClient":
        from ama.rpc.client import RpcClient

        return RpcClient
    raise AttributeError(name)
