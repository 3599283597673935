/**
 * Encrypts what a source must keep secret (a password, a URL that carries one). Adapters guarantee:
 * authenticated encryption (a changed byte fails to open, never yields other text); a fresh nonce per
 * seal; open rejects with an AppError naming the key, never the text, when the key differs.
 */
export interface SecretBox {
  seal(plain: string): string;
  open(sealed: string): string;
}
