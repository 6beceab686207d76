import { LOADTEST_FORMATS, OTHER_INPUTS, PROFILE_FORMATS } from '../lib/formats.ts';

/** The "What it reads" table: files are detected by content, their names are only a hint. */
export function FormatsTable() {
  const rows: [string, string[]][] = [
    ['Profiles', Object.values(PROFILE_FORMATS)],
    ['Load tests', [...new Set(Object.values(LOADTEST_FORMATS))]],
    ['Other', OTHER_INPUTS],
  ];
  return (
    <section aria-labelledby="formats-h" className="formats">
      <details>
        <summary>
          <h2 id="formats-h">What it reads</h2>
        </summary>
        <p className="muted">Files are recognised by their content; a file name is only a hint.</p>
        <table className="formats-table">
          <tbody>
            {rows.map(([kind, items]) => (
              <tr key={kind}>
                <th scope="row">{kind}</th>
                <td>
                  <ul>
                    {items.map((t) => (
                      <li key={t}>{t}</li>
                    ))}
                  </ul>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </details>
    </section>
  );
}
