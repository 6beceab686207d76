/**
 * Command lines as `stagediff capture` records them: shell-quoted so they can be pasted back, with
 * credentials (the edit token, request headers that carry secrets) replaced by ***, because a capture
 * record is kept on the server and readable by anyone with the share link.
 */

/** Shell-quotes one word for the record (so the command can be pasted back). */
function quote(w: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(w) ? w : `'${w.replace(/'/g, `'\\''`)}'`;
}
export function shellJoin(argv: string[]): string {
  return argv.map(quote).join(' ');
}

/** The command line as recorded: the edit token is a secret and never leaves this machine in a record. */
export function redactSecrets(args: string[]): string[] {
  const out: string[] = [];
  const dd = args.indexOf('--');
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (dd >= 0 && i > dd) out.push(a);
    else if (a === '--token' && i + 1 < args.length) {
      out.push(a, '***');
      i++;
    } else if (a.startsWith('--token=')) out.push('--token=***');
    else out.push(a);
  }
  return out;
}

/** Credentials in request headers of a load command (Authorization, Cookie, API keys) become ***. */
export function redactHeaders(command: string): string {
  return command.replace(/((?:proxy-)?authorization|cookie|x-api-key|api-key)(\s*:\s*)([^'"\\]+)/gi, '$1$2***');
}
