import MarkdownIt from 'markdown-it';
import { describe, expect, it } from 'vitest';
import { mdText } from '../../src/render/markdown.ts';

/**
 * GitHub's "extended www autolink": the literal text `www.` at the start of a line or after a space
 * or one of `*_~(`, followed by a domain. This is how it reads the raw Markdown.
 */
const WWW_AUTOLINK = /(^|[\s*_~(])www\.[A-Za-z0-9_-]+\.[A-Za-z0-9_.-]+/im;

describe('mdText', () => {
  it('leaves no bare www. domain for GitHub to turn into a link, and reads back as the same text', () => {
    for (const title of ['www.example.com', 'see WWW.Example.org/x now', 'stage (www.evil.example)', '*www.a.b*']) {
      const md = `**${mdText(title)}**`;
      expect(md, title).not.toMatch(WWW_AUTOLINK);
      const html = new MarkdownIt().renderInline(md);
      expect(html).not.toContain('<a');
      // The escapes are not shown: the text is the title itself (HTML-escaped).
      const shown = html
        .replace(/<\/?strong>/g, '')
        .replace(/&amp;/g, '&')
        .replace(/&lt;/g, '<')
        .replace(/&gt;/g, '>');
      expect(shown).toBe(title);
    }
  });

  it('keeps the other escapes', () => {
    expect(mdText('http://x @user #1 <b>')).toBe('http\\://x \\@user \\#1 \\<b\\>');
  });
});
