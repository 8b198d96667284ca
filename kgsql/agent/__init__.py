"""Agent mode: an LLM answers by calling the graph's tools (Interactive-T2S), and the same tools for MCP.

* ``tools``       the tool registry (SearchColumn, SearchValue, FindShortestPath, ExecuteSQL, Done,
                  ListDatabases, DescribeTable) over one database, bounded text observations
* ``actions``     reading ``Thought:`` / ``Action: Tool(args)`` out of a model's text
* ``transports``  text ReAct (any endpoint) and OpenAI function calling
* ``method``      the ``agent`` method: the episode loop, its round limit and fallbacks
"""
from kgsql.agent.method import AgentMethod, AgentOptions
from kgsql.agent.tools import AGENT_TOOLS, TOOL_SPECS, DatabaseTools, ToolSpec

__all__ = ["AgentMethod", "AgentOptions", "AGENT_TOOLS", "TOOL_SPECS", "DatabaseTools", "ToolSpec"]
