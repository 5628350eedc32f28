// The server's certificate and key: read from their files, checked to be a matching pair before they are used, and
// read again on SIGHUP (a renewed certificate is served to new connections; a bad new pair keeps the old one).
import { readFile } from "node:fs/promises";
import { createSecureContext } from "node:tls";

export type TlsFiles = { certFile: string; keyFile: string };
export type TlsPair = { cert: string; key: string };

/** One line naming what is wrong with the files: unreadable, not PEM, or a key that is not the certificate's. */
function tlsError(e: unknown, files: TlsFiles): Error {
  const err = e as NodeJS.ErrnoException & { path?: string };
  if (err.code === "ENOENT" || err.code === "EACCES" || err.code === "EISDIR")
    return new Error(`cannot read ${err.path ?? "a TLS file"} (${err.code}); check --tls-cert / --tls-key`);
  const what = String(err.message ?? e);
  if (/key values mismatch/i.test(what))
    return new Error(`${files.keyFile} is not the private key of the certificate in ${files.certFile}`);
  return new Error(`cannot use ${files.certFile} and ${files.keyFile} for TLS: ${what}`);
}

/** Reads the certificate and key and checks them (createSecureContext throws on a bad or mismatched pair). */
export async function readTlsPair(files: TlsFiles): Promise<TlsPair> {
  try {
    const [cert, key] = await Promise.all([readFile(files.certFile, "utf8"), readFile(files.keyFile, "utf8")]);
    createSecureContext({ cert, key });
    return { cert, key };
  } catch (e) {
    throw tlsError(e, files);
  }
}

/** Reloads the pair into `server`; resolves with why it was not (the old pair stays), else undefined. */
export async function reloadTls(
  server: { setSecureContext(o: TlsPair): void },
  files: TlsFiles,
): Promise<string | undefined> {
  try {
    server.setSecureContext(await readTlsPair(files));
    return undefined;
  } catch (e) {
    return (e as Error).message;
  }
}
