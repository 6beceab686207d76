/**
 * Wires every importer into detection. Importing this module once (the CLI and the server do)
 * makes `ingest` recognise all supported formats.
 */
import { registerLoadTestImporters } from './detect.ts';

registerLoadTestImporters([]);
