import { Component, type ReactNode } from 'react';

/**
 * One panel of the page that fails to render (a stored record the page cannot read, a bug) shows that it
 * failed, in its own place; the rest of the page stays as it was. `resetKey` changing (another tab, other
 * stages) tries the panel again.
 */
export class PanelBoundary extends Component<
  { what: string; resetKey?: unknown; children: ReactNode },
  { error: Error | null; key: unknown }
> {
  override state: { error: Error | null; key: unknown } = { error: null, key: this.props.resetKey };

  static getDerivedStateFromError(error: unknown) {
    return { error: error instanceof Error ? error : new Error(String(error)) };
  }

  static getDerivedStateFromProps(
    props: { resetKey?: unknown },
    state: { error: Error | null; key: unknown },
  ): { error: Error | null; key: unknown } | null {
    return props.resetKey !== state.key ? { error: null, key: props.resetKey } : null;
  }

  override render() {
    if (!this.state.error) return this.props.children;
    return (
      <div className="warnings" role="alert" aria-label={`${this.props.what} failed`}>
        <p>
          The {this.props.what} could not be shown ({this.state.error.message.slice(0, 200)}); the rest of the page
          works. Reloading may help; if not, the comparison holds data this page cannot read.
        </p>
      </div>
    );
  }
}
