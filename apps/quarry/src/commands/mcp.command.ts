import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { serverSettings } from './server-settings';

/*
 * `quarry mcp`: MCP over stdio for desktop agents, relayed message by message to a running server's
 * /mcp with QUARRY_TOKEN, so the tools, realms, limits and audit are the server's own: this process
 * holds no data and no policy.
 */

export interface McpBridgeSettings {
  url: URL;
  token: string;
}

/** QUARRY_URL and QUARRY_TOKEN, checked before anything starts: a clear error instead of a silent agent. */
export function mcpBridgeSettings(env: Record<string, string | undefined>): McpBridgeSettings {
  const { url, token } = serverSettings(env);
  return { url: new URL('/mcp', url), token };
}

export async function runMcpBridge(settings: McpBridgeSettings): Promise<void> {
  const upstream = new StreamableHTTPClientTransport(settings.url, {
    requestInit: { headers: { Authorization: `Bearer ${settings.token}` } },
  });
  const local = new StdioServerTransport();
  const answerError = (message: JSONRPCMessage, err: unknown) => {
    if (!('id' in message) || !('method' in message)) return;
    void local.send({
      jsonrpc: '2.0',
      id: message.id,
      error: {
        code: -32603,
        message: `Quarry at ${settings.url.origin}: ${err instanceof Error ? err.message : String(err)}`,
      },
    });
  };
  local.onmessage = (message) => {
    upstream.send(message).catch((err: unknown) => answerError(message, err));
  };
  upstream.onmessage = (message) => {
    void local.send(message);
  };
  upstream.onerror = (err) => process.stderr.write(`quarry mcp: ${err.message}\n`);
  const closed = new Promise<void>((resolve) => {
    local.onclose = () => resolve();
  });
  await upstream.start();
  await local.start();
  process.stdin.on('end', () => void local.close());
  await closed;
  await upstream.close();
}
