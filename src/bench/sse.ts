// Splits a text/event-stream body into the payloads of its `data:` lines, as bytes arrive.
// Events end at a blank line (LF or CRLF); comments and other fields are ignored.

export class SseSplitter {
  private buf = '';

  /** Adds a decoded piece of the body; returns the data payloads of the events it completed. */
  push(text: string): string[] {
    this.buf += text;
    const out: string[] = [];
    for (;;) {
      const m = /\r?\n\r?\n/.exec(this.buf);
      if (!m) break;
      const event = this.buf.slice(0, m.index);
      this.buf = this.buf.slice(m.index + m[0].length);
      const data: string[] = [];
      for (const line of event.split(/\r?\n/)) {
        if (line.startsWith('data:')) data.push(line.slice(line[5] === ' ' ? 6 : 5));
      }
      if (data.length) out.push(data.join('\n'));
    }
    return out;
  }

  /** Whatever is left when the body ends without a final blank line. */
  rest(): string[] {
    const left = this.buf.trim();
    this.buf = '';
    return left ? this.push(`${left}\n\n`) : [];
  }
}
