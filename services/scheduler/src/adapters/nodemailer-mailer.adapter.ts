import nodemailer, { type Transporter } from 'nodemailer';
import type { Mailer, MailMessage } from '../ports/mailer.port';

/** Each SMTP step (connect, greeting, any read or write) and the whole message: as webhooks' deadlines. */
const CONNECT_MS = 10_000;
const TOTAL_MS = 30_000;

/** E-mail through the SMTP relay of QUARRY_SMTP_URL; unconfigured when it is unset. */
export class NodemailerMailer implements Mailer {
  private readonly transport: Transporter | undefined;

  constructor(
    smtpUrl: string | undefined,
    private readonly from: string,
  ) {
    // nodemailer waits minutes by default at each step; a relay that stalls must not hold a delivery slot.
    this.transport = smtpUrl
      ? nodemailer.createTransport({
          url: smtpUrl,
          connectionTimeout: CONNECT_MS,
          greetingTimeout: CONNECT_MS,
          socketTimeout: CONNECT_MS,
        })
      : undefined;
  }

  get configured(): boolean {
    return this.transport !== undefined;
  }

  async send(m: MailMessage): Promise<void> {
    if (!this.transport) throw new Error('e-mail delivery is not configured (QUARRY_SMTP_URL)');
    const transport = this.transport;
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(
        () => reject(new Error(`the SMTP relay did not take the message within ${TOTAL_MS} ms`)),
        TOTAL_MS,
      );
    });
    const sending = transport.sendMail({
      from: this.from,
      to: m.to,
      subject: m.subject,
      text: m.text,
      messageId: m.messageId,
      headers: m.headers,
      attachments: m.attachment
        ? [{ filename: m.attachment.filename, contentType: m.attachment.contentType, content: m.attachment.content }]
        : [],
    });
    try {
      await Promise.race([sending, deadline]);
    } finally {
      clearTimeout(timer);
      sending.catch(() => undefined);
    }
  }

  close(): void {
    this.transport?.close();
  }
}
