"""The interface the framework adapters build on.

The LlamaIndex and LangChain distributions import the core only from here.
"""
