import { AppError, isAppError, quoteInput, quoteList } from '@quarry/errors';
import type { UserSummary } from '@quarry/contract';
import type { IndexCatalog, MetadataStore, Realm, User, UserChanges } from '@quarry/metadata-store';
import { checkQuerySyntax, isFieldType, parseQuery, type FieldDef } from '@quarry/query-language';
import type { Principal } from './principal';

export type UserStore = Pick<
  MetadataStore,
  'createUser' | 'findUserByName' | 'listUsers' | 'setUserStatus' | 'updateUser' | 'deleteUser'
>;

/** Realms as the API writes them: index → the queries ANDed into that user's every call on it. */
export type RealmMap = Record<string, string[]>;

/**
 * Whether the caller may act on users other than their own: the scope alone is not enough, as a scope is
 * what one token may do and admin is what its user is; both are asked, so neither a stolen narrow admin
 * token nor a non-admin's wide one manages anybody.
 */
export function mayManageUsers(p: Principal): boolean {
  return p.scopes.has('users:admin') && p.user.admin;
}

/** Refuses (403) a caller whose token's user is not an admin; the scope was checked by the dispatch. */
export function requireAdminUser(p: Principal): void {
  if (!p.user.admin)
    throw AppError.forbidden(
      `Only an admin user may manage users; the token's user ${quoteInput(p.user.name)} is not an admin`,
    );
}

export function realmMap(realms: readonly Realm[]): RealmMap {
  const out: RealmMap = {};
  for (const r of realms) (out[r.index] ??= []).push(r.query);
  return out;
}

export function userSummary(u: User): UserSummary {
  return {
    name: u.name,
    status: u.status,
    admin: u.admin,
    indexes: [...u.indexes],
    realms: realmMap(u.realms),
    createdAt: u.createdAt,
  };
}

/**
 * USERS.*: the admin API on the metadata store the CLI's `quarry user` commands use. Every change is checked
 * whole before the store is touched, so a refused call leaves the user as it was.
 */
export class ManageUsersUseCase {
  constructor(
    private readonly store: UserStore,
    private readonly catalog: Pick<IndexCatalog, 'getIndex'>,
    private readonly now: () => number = Date.now,
  ) {}

  async create(
    p: Principal,
    params: { name: string; indexes: string[]; realms?: RealmMap; admin: boolean },
  ): Promise<UserSummary> {
    requireAdminUser(p);
    const grant = { indexes: dedupe(params.indexes), admin: params.admin };
    const realms = await this.checkRealms(params.realms ?? {}, grant);
    return userSummary(await this.store.createUser({ name: params.name, ...grant, realms }));
  }

  async update(
    p: Principal,
    params: { name: string; indexes?: string[]; realms?: RealmMap; admin?: boolean },
  ): Promise<UserSummary> {
    requireAdminUser(p);
    const before = await this.existing(params.name);
    // Demoting oneself would leave the caller unable to undo it (and perhaps no admin at all).
    if (params.admin === false && before.name === p.user.name)
      throw AppError.invalid('admin: an admin may not demote their own user (ask another admin)');
    const changes: UserChanges = {
      ...(params.indexes === undefined ? {} : { indexes: dedupe(params.indexes) }),
      ...(params.admin === undefined ? {} : { admin: params.admin }),
    };
    const grant = { indexes: changes.indexes ?? before.indexes, admin: changes.admin ?? before.admin };
    if (params.realms !== undefined) changes.realms = await this.checkRealms(params.realms, grant);
    else if (params.indexes !== undefined || params.admin !== undefined)
      // The realms kept must still fit the new grant: a realm on an index no longer given, or on an admin,
      // would look as if it restricted something while it never applies.
      await this.checkRealms(realmMap(before.realms), grant, 'the user’s realms');
    return userSummary(await this.store.updateUser(params.name, changes));
  }

  async find(p: Principal, name: string | undefined): Promise<{ users: UserSummary[] }> {
    requireAdminUser(p);
    if (name !== undefined) return { users: [userSummary(await this.existing(name))] };
    return { users: (await this.store.listUsers()).map(userSummary) };
  }

  async setStatus(p: Principal, name: string, status: 'active' | 'disabled'): Promise<UserSummary> {
    requireAdminUser(p);
    if (status === 'disabled' && name === p.user.name)
      throw AppError.invalid('name: an admin may not disable their own user (ask another admin)');
    return userSummary(await this.store.setUserStatus(name, status));
  }

  async delete(p: Principal, name: string): Promise<{ name: string; deleted: true }> {
    requireAdminUser(p);
    if (name === p.user.name)
      throw AppError.invalid('name: an admin may not delete their own user (ask another admin)');
    await this.store.deleteUser(name);
    return { name, deleted: true };
  }

  private async existing(name: string): Promise<User> {
    const user = await this.store.findUserByName(name);
    if (!user) throw AppError.notFound(`User ${quoteInput(name)} not found`);
    return user;
  }

  /**
   * A realm is a security rule, so every doubt is a refusal (as `quarry user create --realm` refuses): on
   * an admin it would never apply, on an index the user is not given it would look as if it did, a blank
   * or unparsable one would fail every search later. When the index exists its fields are known and a
   * realm naming another field is refused too; an index not loaded yet is taken on trust, as the CLI does.
   */
  private async checkRealms(
    realms: RealmMap,
    grant: { indexes: readonly string[]; admin: boolean },
    what = 'realms',
  ): Promise<Realm[]> {
    const entries = Object.entries(realms);
    if (entries.length > 0 && grant.admin)
      throw AppError.invalid(
        `${what}: a realm has no effect on an admin, who sees every row of every index; leave out admin or the realms`,
      );
    const out: Realm[] = [];
    for (const [index, queries] of entries) {
      if (!grant.indexes.includes('*') && !grant.indexes.includes(index)) {
        const given = grant.indexes.length ? `only ${quoteList(grant.indexes)}` : 'no index';
        throw AppError.invalid(`${what}.${index}: names an index the user is not given (indexes gives ${given})`);
      }
      const fields = await this.fieldsOf(index);
      for (const [i, raw] of queries.entries()) {
        const query = raw.trim();
        try {
          if (fields) parseQuery(query, { fields, now: this.now() });
          else checkQuerySyntax(query);
        } catch (err) {
          if (isAppError(err)) throw AppError.invalid(`${what}.${index}[${i}]: ${err.detail}`);
          throw err;
        }
        out.push({ index, query });
      }
    }
    return out;
  }

  private async fieldsOf(index: string): Promise<FieldDef[] | undefined> {
    const entry = await this.catalog.getIndex(index);
    if (!entry) return undefined;
    return entry.fields.flatMap((f) => (isFieldType(f.type) ? [{ name: f.name, type: f.type }] : []));
  }
}

function dedupe(values: readonly string[]): string[] {
  return [...new Set(values)];
}
