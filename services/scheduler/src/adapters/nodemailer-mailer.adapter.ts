import nodemailer, { type Transporter } from 'nodemailer';
import type { Mailer, MailMessage } from '../ports/mailer.port';

/** E-mail through the SMTP relay of QUARRY_SMTP_URL; unconfigured when it is unset. */
export class NodemailerMailer implements Mailer {
  private readonly transport: Transporter | undefined;

  constructor(
    smtpUrl: string | undefined,
    private readonly from: string,
  ) {
    this.transport = smtpUrl ? nodemailer.createTransport(smtpUrl) : undefined;
  }

  get configured(): boolean {
    return this.transport !== undefined;
  }

  async send(m: MailMessage): Promise<void> {
    if (!this.transport) throw new Error('e-mail delivery is not configured (QUARRY_SMTP_URL)');
    await this.transport.sendMail({
      from: this.from,
      to: m.to,
      subject: m.subject,
      text: m.text,
      messageId: m.messageId,
      headers: m.headers,
      attachments: [
        { filename: m.attachment.filename, contentType: m.attachment.contentType, content: m.attachment.content },
      ],
    });
  }

  close(): void {
    this.transport?.close();
  }
}
