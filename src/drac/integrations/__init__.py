"""drac where its users already work: a LangChain loader and retriever
(`drac.integrations.langchain`, extra `drac[langchain]`), a LlamaIndex reader
(`drac.integrations.llamaindex`, `drac[llamaindex]`) and an MCP server
(`drac.integrations.mcp_server`, `drac[mcp]`, run by `drac mcp`).

Each module imports its framework; nothing else in drac imports them.
"""
