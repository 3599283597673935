export interface MailMessage {
  to: string[];
  subject: string;
  text: string;
  /** Stable per run, so a mail client can tell a resent message from a new one. */
  messageId: string;
  headers: Record<string, string>;
  /** Absent when the output goes as a link in the text. */
  attachment?: { filename: string; contentType: string; content: Buffer };
}

/** Sends e-mail; `configured` is false when the server has no SMTP relay (QUARRY_SMTP_URL unset). */
export interface Mailer {
  readonly configured: boolean;
  send(message: MailMessage): Promise<void>;
}
