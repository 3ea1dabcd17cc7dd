/* SPDX-License-Identifier: MIT */
/* In-memory loader for x86-64 ELF64 relocatable objects, the output of
 * `clang -c`. Objects also come back from the disk cache, where a truncated or
 * corrupted file must give a GError and never a crash, so every header field,
 * offset, size and index is checked against the file before it is used, and
 * every structure is copied out with memcpy (the bytes may be unaligned).
 *
 * The image is one anonymous mapping of up to three page-aligned segments:
 *
 *   text    SHF_EXECINSTR sections                      -> read + exec
 *   rodata  other read-only sections, then the GOT       -> read
 *   data    SHF_WRITE sections (.data, .bss)             -> read + write
 *
 * It is mapped read+write, filled and relocated, then each segment gets its
 * final protection: no page is ever writable and executable at once. Since
 * the GOT is filled at load time and never changes, it lives in the read-only
 * segment (like a linker's RELRO).
 *
 * The one kind of outside symbol is a function of the kernel library
 * (kernel-lib.h), which may lie anywhere from the image: units are compiled
 * with -fno-plt, so such a call is GOT-relative (the slot holds the 64-bit
 * address); a direct 32-bit reference to it that does not reach is the
 * usual overflow error. */

#define G_LOG_DOMAIN "morok-kernels"

#include "morok-compiler.h"
#include "kernels/kernel-lib.h"

#include <elf.h>
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* Kernels keep their buffers in the plan, so their objects are small; a
 * larger image means a corrupted size (a flipped bit in .bss) and is refused
 * before anything is mapped. */
#define IMAGE_SIZE_MAX ((gsize) 256 << 20)

#define NOT_LOADED G_MAXSIZE

enum
{
  SEG_TEXT,
  SEG_RODATA,
  SEG_DATA,
  N_SEGS
};

struct _MorokObject
{
  guint8 *image; /* anonymous mapping of image_size bytes */
  gsize image_size;
  GHashTable *functions; /* global function name (owned) -> address */
};

/* State of one load; everything here is freed by loader_clear (). */
typedef struct
{
  const guint8 *data;
  gsize size;
  Elf64_Ehdr eh;
  Elf64_Shdr *sh; /* copies of the e_shnum section headers */
  guint shnum;
  guint symtab; /* index of the one SHT_SYMTAB section */
  gsize nsyms;
  gsize *sec_offset; /* per section: its offset in the image, or NOT_LOADED */
  gsize *got_slot;   /* per symbol: offset of its GOT slot, or NOT_LOADED */
  gsize n_got;
  gsize seg_start[N_SEGS];
  gsize seg_end[N_SEGS];
  guint8 *image;
  gsize image_size;
  const MorokKernelLib *lib; /* resolves undefined symbols; may be NULL */
} Loader;

static gsize
page_size (void)
{
  static gsize size;

  if (g_once_init_enter (&size))
    {
      long s = sysconf (_SC_PAGESIZE);
      g_once_init_leave (&size, s > 0 ? (gsize) s : 4096);
    }
  return size;
}

static gboolean G_GNUC_PRINTF (3, 4)
    fail (GError **error, MorokCompileError code, const char *format, ...)
{
  g_autofree char *message = NULL;
  va_list args;

  va_start (args, format);
  message = g_strdup_vprintf (format, args);
  va_end (args);
  g_set_error_literal (error, MOROK_COMPILE_ERROR, code, message);
  return FALSE;
}

#define BAD(...) fail (error, MOROK_COMPILE_ERROR_BAD_OBJECT, __VA_ARGS__)

/* TRUE when [off, off + len) lies inside a buffer of @size bytes. */
static gboolean
range_ok (guint64 size, guint64 off, guint64 len)
{
  return off <= size && len <= size - off;
}

/* The NUL-terminated string at @off in string table section @idx, or NULL
 * when it starts or ends outside the table. */
static const char *
string_at (Loader *l, guint idx, guint64 off)
{
  const Elf64_Shdr *s = &l->sh[idx];
  const char *tab = (const char *) l->data + s->sh_offset;

  if (off >= s->sh_size || memchr (tab + off, '\0', s->sh_size - off) == NULL)
    return NULL;
  return tab + off;
}

/* Name of section @idx, valid once check_sections () has passed. */
static const char *
section_name (Loader *l, guint idx)
{
  return string_at (l, l->eh.e_shstrndx, l->sh[idx].sh_name);
}

static gboolean
check_header (Loader *l, GError **error)
{
  const Elf64_Ehdr *eh = &l->eh;

  if (l->size < sizeof (Elf64_Ehdr))
    return BAD ("object is %" G_GSIZE_FORMAT " bytes, shorter than an ELF header", l->size);
  memcpy (&l->eh, l->data, sizeof (Elf64_Ehdr));
  if (memcmp (eh->e_ident, ELFMAG, SELFMAG) != 0)
    return BAD ("object does not start with the ELF magic");
  if (eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_ident[EI_DATA] != ELFDATA2LSB)
    return BAD ("object is not little-endian ELF64 (class %u, data %u)", eh->e_ident[EI_CLASS],
                eh->e_ident[EI_DATA]);
  if (eh->e_ident[EI_VERSION] != EV_CURRENT || eh->e_version != EV_CURRENT)
    return BAD ("unknown ELF version %u", eh->e_version);
  if (eh->e_type != ET_REL)
    return BAD ("ELF type is %u, expected a relocatable object (%u)", eh->e_type, ET_REL);
  if (eh->e_machine != EM_X86_64)
    return BAD ("ELF machine is %u, expected x86-64 (%u)", eh->e_machine, EM_X86_64);
  /* e_entry, e_phoff, e_phnum and e_flags mean nothing in a relocatable
   * object and are never read. */
  if (eh->e_ehsize != sizeof (Elf64_Ehdr) || eh->e_shentsize != sizeof (Elf64_Shdr))
    return BAD ("ELF header size %u or section header size %u is wrong", eh->e_ehsize,
                eh->e_shentsize);
  /* e_shnum 0 means "more than 0xff00 sections, count in section 0", which no
   * kernel object needs. */
  if (eh->e_shnum == 0)
    return BAD ("object has no section headers (extended numbering is not supported)");
  if (!range_ok (l->size, eh->e_shoff, (guint64) eh->e_shnum * sizeof (Elf64_Shdr)))
    return BAD ("section headers (%u at offset %" G_GUINT64_FORMAT ") run past the end of the "
                "%" G_GSIZE_FORMAT "-byte object",
                eh->e_shnum, (guint64) eh->e_shoff, l->size);
  if (eh->e_shstrndx == SHN_UNDEF || eh->e_shstrndx >= eh->e_shnum)
    return BAD ("section name table index %u is not a section (%u sections)", eh->e_shstrndx,
                eh->e_shnum);
  l->shnum = eh->e_shnum;
  l->sh = g_new (Elf64_Shdr, l->shnum);
  memcpy (l->sh, l->data + eh->e_shoff, l->shnum * sizeof (Elf64_Shdr));
  return TRUE;
}

/* Bounds, alignments and names of every section; finds the symbol table. */
static gboolean
check_sections (Loader *l, GError **error)
{
  const Elf64_Shdr *shstr = &l->sh[l->eh.e_shstrndx];
  guint n_symtabs = 0;

  for (guint i = 0; i < l->shnum; i++)
    {
      const Elf64_Shdr *s = &l->sh[i];

      if (s->sh_type != SHT_NOBITS && s->sh_type != SHT_NULL
          && !range_ok (l->size, s->sh_offset, s->sh_size))
        return BAD ("section %u: offset %" G_GUINT64_FORMAT " + size %" G_GUINT64_FORMAT
                    " runs past the end of the %" G_GSIZE_FORMAT "-byte object",
                    i, (guint64) s->sh_offset, (guint64) s->sh_size, l->size);
      if ((s->sh_addralign & (s->sh_addralign - 1)) != 0)
        return BAD ("section %u: alignment %" G_GUINT64_FORMAT " is not a power of two", i,
                    (guint64) s->sh_addralign);
      if (s->sh_type == SHT_SYMTAB)
        {
          l->symtab = i;
          n_symtabs++;
        }
      if (s->sh_type == SHT_SYMTAB_SHNDX)
        return BAD ("section %u: extended section indices are not supported", i);
    }
  if (shstr->sh_type != SHT_STRTAB)
    return BAD ("section name table (section %u) has type %u, not a string table", l->eh.e_shstrndx,
                shstr->sh_type);
  for (guint i = 0; i < l->shnum; i++)
    if (section_name (l, i) == NULL)
      return BAD ("section %u: name offset %u lies outside the section name table", i,
                  l->sh[i].sh_name);

  if (n_symtabs != 1)
    return BAD ("object has %u symbol tables, expected one", n_symtabs);
  const Elf64_Shdr *st = &l->sh[l->symtab];
  if (st->sh_entsize != sizeof (Elf64_Sym) || st->sh_size % sizeof (Elf64_Sym) != 0)
    return BAD ("symbol table: entry size %" G_GUINT64_FORMAT " or size %" G_GUINT64_FORMAT
                " is not a multiple of %zu",
                (guint64) st->sh_entsize, (guint64) st->sh_size, sizeof (Elf64_Sym));
  if (st->sh_link >= l->shnum || l->sh[st->sh_link].sh_type != SHT_STRTAB)
    return BAD ("symbol table: linked string table %u is not a string table", st->sh_link);
  l->nsyms = st->sh_size / sizeof (Elf64_Sym);
  return TRUE;
}

static void
read_symbol (Loader *l, gsize idx, Elf64_Sym *out)
{
  memcpy (out, l->data + l->sh[l->symtab].sh_offset + idx * sizeof (Elf64_Sym), sizeof *out);
}

/* Name of symbol @idx for messages and lookup; NULL if its offset is bad.
 * Section symbols have no name of their own: they take their section's. */
static const char *
symbol_name (Loader *l, const Elf64_Sym *sym)
{
  if (ELF64_ST_TYPE (sym->st_info) == STT_SECTION && sym->st_shndx < l->shnum)
    return section_name (l, sym->st_shndx);
  return string_at (l, l->sh[l->symtab].sh_link, sym->st_name);
}

static gboolean
is_got_relocation (guint32 type)
{
  return type == R_X86_64_GOTPCREL || type == R_X86_64_GOTPCRELX || type == R_X86_64_REX_GOTPCRELX;
}

/* Checks the headers of every relocation section and gives one GOT slot to
 * each symbol that a GOT-relative relocation names. */
static gboolean
check_relocation_sections (Loader *l, GError **error)
{
  l->got_slot = g_new (gsize, l->nsyms);
  for (gsize i = 0; i < l->nsyms; i++)
    l->got_slot[i] = NOT_LOADED;

  for (guint i = 0; i < l->shnum; i++)
    {
      const Elf64_Shdr *s = &l->sh[i];

      if (s->sh_type == SHT_REL)
        return BAD ("section '%s': REL relocations are not used on x86-64", section_name (l, i));
      if (s->sh_type != SHT_RELA)
        continue;
      if (s->sh_entsize != sizeof (Elf64_Rela) || s->sh_size % sizeof (Elf64_Rela) != 0)
        return BAD ("section '%s': entry size %" G_GUINT64_FORMAT " or size %" G_GUINT64_FORMAT
                    " is not a multiple of %zu",
                    section_name (l, i), (guint64) s->sh_entsize, (guint64) s->sh_size,
                    sizeof (Elf64_Rela));
      if (s->sh_link != l->symtab)
        return BAD ("section '%s': linked to section %u, not the symbol table %u",
                    section_name (l, i), s->sh_link, l->symtab);
      if (s->sh_info >= l->shnum)
        return BAD ("section '%s': target section %u does not exist", section_name (l, i),
                    s->sh_info);
      if (!(l->sh[s->sh_info].sh_flags & SHF_ALLOC))
        continue; /* debug info and the like: never loaded, never relocated */

      for (gsize k = 0; k < s->sh_size / sizeof (Elf64_Rela); k++)
        {
          Elf64_Rela r;
          memcpy (&r, l->data + s->sh_offset + k * sizeof r, sizeof r);
          gsize sym = ELF64_R_SYM (r.r_info);
          if (sym >= l->nsyms)
            return BAD ("section '%s': relocation %" G_GSIZE_FORMAT " names symbol %" G_GSIZE_FORMAT
                        ", the table has %" G_GSIZE_FORMAT,
                        section_name (l, i), k, sym, l->nsyms);
          if (is_got_relocation (ELF64_R_TYPE (r.r_info)) && l->got_slot[sym] == NOT_LOADED)
            l->got_slot[sym] = l->n_got++;
        }
    }
  return TRUE;
}

static int
segment_of (const Elf64_Shdr *s)
{
  if (s->sh_flags & SHF_EXECINSTR)
    return SEG_TEXT;
  return (s->sh_flags & SHF_WRITE) ? SEG_DATA : SEG_RODATA;
}

/* Places @size bytes aligned to @align at the image cursor. */
static gboolean
place (gsize *cursor, guint64 size, guint64 align, gsize *out_offset, const char *what,
       GError **error)
{
  gsize at = (*cursor + (align ? align : 1) - 1) & ~(gsize) ((align ? align : 1) - 1);

  if (size > IMAGE_SIZE_MAX || at > IMAGE_SIZE_MAX - size)
    return BAD ("%s (%" G_GUINT64_FORMAT " bytes) does not fit the %" G_GSIZE_FORMAT
                " MiB image limit",
                what, size, IMAGE_SIZE_MAX >> 20);
  *out_offset = at;
  *cursor = at + size;
  return TRUE;
}

/* Assigns every SHF_ALLOC section an offset in its segment, and the GOT its
 * place at the end of the read-only segment. */
static gboolean
lay_out (Loader *l, GError **error)
{
  gsize cursor = 0;

  l->sec_offset = g_new (gsize, l->shnum);
  for (guint i = 0; i < l->shnum; i++)
    {
      const Elf64_Shdr *s = &l->sh[i];

      l->sec_offset[i] = NOT_LOADED;
      if (!(s->sh_flags & SHF_ALLOC))
        continue;
      /* .eh_frame (X86_64_UNWIND) is harmless data; init arrays would be
       * constructors that nobody runs, so refuse them. */
      if (s->sh_type != SHT_PROGBITS && s->sh_type != SHT_NOBITS && s->sh_type != SHT_X86_64_UNWIND)
        return BAD ("section '%s' has type %u, which the loader does not support",
                    section_name (l, i), s->sh_type);
      if ((s->sh_flags & SHF_WRITE) && (s->sh_flags & SHF_EXECINSTR))
        return BAD ("section '%s' is writable and executable", section_name (l, i));
      if (s->sh_addralign > page_size ())
        return BAD ("section '%s' asks for %" G_GUINT64_FORMAT "-byte alignment, more than a page",
                    section_name (l, i), (guint64) s->sh_addralign);
    }

  for (int seg = 0; seg < N_SEGS; seg++)
    {
      gsize unused;
      if (!place (&cursor, 0, page_size (), &unused, "segment", error))
        return FALSE;
      l->seg_start[seg] = cursor;
      for (guint i = 0; i < l->shnum; i++)
        {
          const Elf64_Shdr *s = &l->sh[i];
          if ((s->sh_flags & SHF_ALLOC) && segment_of (s) == seg
              && !place (&cursor, s->sh_size, s->sh_addralign, &l->sec_offset[i],
                         section_name (l, i), error))
            return FALSE;
        }
      if (seg == SEG_RODATA && l->n_got > 0)
        {
          gsize got = 0;
          if (!place (&cursor, (guint64) l->n_got * 8, 8, &got, "GOT", error))
            return FALSE;
          for (gsize k = 0; k < l->nsyms; k++)
            if (l->got_slot[k] != NOT_LOADED)
              l->got_slot[k] = got + l->got_slot[k] * 8;
        }
      l->seg_end[seg] = cursor;
    }
  /* Map at least one page so that an object without code still loads. */
  l->image_size = MAX (cursor + page_size () - 1, page_size ()) & ~(page_size () - 1);
  return TRUE;
}

/* The address of the kernel library's function @name, or 0. */
static guint64
library_address (const MorokKernelLib *lib, const char *name)
{
  for (const MorokKernelSymbol *s = lib ? lib->symbols : NULL; s && s->name; s++)
    if (strcmp (s->name, name) == 0)
      return (guint64) (guintptr) s->address;
  return 0;
}

/* Address of symbol @idx in the image or the kernel library; fails on
 * other undefined symbols, since generated code must be self-contained.
 * @where names the relocation. */
static gboolean
resolve_symbol (Loader *l, gsize idx, const char *where, guint64 *out_addr, GError **error)
{
  Elf64_Sym sym;
  const char *name;

  if (idx == 0)
    {
      *out_addr = 0; /* the null symbol: the value is the addend alone */
      return TRUE;
    }
  read_symbol (l, idx, &sym);
  name = symbol_name (l, &sym);
  if (name == NULL)
    return BAD ("symbol %" G_GSIZE_FORMAT ": name offset %u lies outside the string table", idx,
                sym.st_name);
  if (sym.st_shndx == SHN_UNDEF)
    {
      *out_addr = library_address (l->lib, name);
      if (*out_addr != 0)
        return TRUE;
      if (l->lib)
        return fail (error, MOROK_COMPILE_ERROR_RELOCATION,
                     "undefined symbol '%s' (used at %s): kernels may only call functions "
                     "defined in their own source or the %s kernel library",
                     name, where, morok_isa_name (l->lib->isa));
      return fail (error, MOROK_COMPILE_ERROR_RELOCATION,
                   "undefined symbol '%s' (used at %s): kernels may only call functions defined "
                   "in their own source",
                   name, where);
    }
  if (sym.st_shndx == SHN_ABS)
    {
      *out_addr = sym.st_value;
      return TRUE;
    }
  if (sym.st_shndx == SHN_COMMON)
    return fail (error, MOROK_COMPILE_ERROR_RELOCATION,
                 "common symbol '%s' (used at %s) is not supported: compile with -fno-common", name,
                 where);
  if (sym.st_shndx >= l->shnum)
    return BAD ("symbol '%s' is in section %u, the object has %u", name, sym.st_shndx, l->shnum);
  if (l->sec_offset[sym.st_shndx] == NOT_LOADED)
    return fail (error, MOROK_COMPILE_ERROR_RELOCATION,
                 "symbol '%s' (used at %s) lies in section '%s', which is not loaded", name, where,
                 section_name (l, sym.st_shndx));
  if (sym.st_value > l->sh[sym.st_shndx].sh_size)
    return BAD ("symbol '%s' at offset %" G_GUINT64_FORMAT " lies past the end of section '%s'",
                name, (guint64) sym.st_value, section_name (l, sym.st_shndx));
  *out_addr = (guint64) (guintptr) (l->image + l->sec_offset[sym.st_shndx]) + sym.st_value;
  return TRUE;
}

static const char *
relocation_name (guint32 type)
{
  switch (type)
    {
    case R_X86_64_64: return "R_X86_64_64";
    case R_X86_64_PC32: return "R_X86_64_PC32";
    case R_X86_64_PLT32: return "R_X86_64_PLT32";
    case R_X86_64_32: return "R_X86_64_32";
    case R_X86_64_32S: return "R_X86_64_32S";
    case R_X86_64_PC64: return "R_X86_64_PC64";
    case R_X86_64_GOTPCREL: return "R_X86_64_GOTPCREL";
    case R_X86_64_GOTPCRELX: return "R_X86_64_GOTPCRELX";
    case R_X86_64_REX_GOTPCRELX: return "R_X86_64_REX_GOTPCRELX";
    default: return NULL;
    }
}

/* Applies relocation @r of section @rs to its target section. */
static gboolean
apply_one (Loader *l, guint rs, const Elf64_Rela *r, GError **error)
{
  guint target = l->sh[rs].sh_info;
  guint32 type = ELF64_R_TYPE (r->r_info);
  gsize sym = ELF64_R_SYM (r->r_info);
  const char *type_name = relocation_name (type);
  g_autofree char *where = g_strdup_printf ("%s+0x%" G_GINT64_MODIFIER "x",
                                            section_name (l, target), (guint64) r->r_offset);
  guint width = (type == R_X86_64_64 || type == R_X86_64_PC64) ? 8 : 4;
  guint64 S = 0, P, v;
  gint64 A = r->r_addend;

  if (type == R_X86_64_NONE)
    return TRUE;
  if (type_name == NULL)
    return fail (error, MOROK_COMPILE_ERROR_RELOCATION,
                 "unsupported relocation type %u at %s (section '%s')", type, where,
                 section_name (l, rs));
  if (!range_ok (l->sh[target].sh_size, r->r_offset, width))
    return BAD ("%s at %s lies outside its %" G_GUINT64_FORMAT "-byte section", type_name, where,
                (guint64) l->sh[target].sh_size);
  if (!resolve_symbol (l, sym, where, &S, error))
    return FALSE;

  guint8 *place_ptr = l->image + l->sec_offset[target] + r->r_offset;
  P = (guint64) (guintptr) place_ptr;
  if (is_got_relocation (type))
    {
      guint8 *slot = l->image + l->got_slot[sym];
      memcpy (slot, &S, 8);
      S = (guint64) (guintptr) slot; /* from here on, S stands for G + GOT */
    }

  switch (type)
    {
    case R_X86_64_64: v = S + A; break;
    case R_X86_64_PC64: v = S + A - P; break;
    case R_X86_64_32:
      v = S + A;
      if (v > G_MAXUINT32)
        goto overflow;
      break;
    default: /* PC32, PLT32, 32S and the GOT-relative ones: signed 32 bits */
      v = S + A - (type == R_X86_64_32S ? 0 : P);
      if ((gint64) v < G_MININT32 || (gint64) v > G_MAXINT32)
        goto overflow;
      break;
    }
  memcpy (place_ptr, &v, width); /* little-endian: the low bytes */
  return TRUE;

overflow:
  return fail (error, MOROK_COMPILE_ERROR_RELOCATION,
               "%s at %s: value 0x%" G_GINT64_MODIFIER "x does not fit in 32 bits", type_name,
               where, v);
}

static gboolean
apply_relocations (Loader *l, GError **error)
{
  for (guint i = 0; i < l->shnum; i++)
    {
      const Elf64_Shdr *s = &l->sh[i];

      if (s->sh_type != SHT_RELA || l->sec_offset[s->sh_info] == NOT_LOADED)
        continue;
      if (l->sh[s->sh_info].sh_type == SHT_NOBITS)
        return BAD ("section '%s' relocates '%s', which has no contents", section_name (l, i),
                    section_name (l, s->sh_info));
      for (gsize k = 0; k < s->sh_size / sizeof (Elf64_Rela); k++)
        {
          Elf64_Rela r;
          memcpy (&r, l->data + s->sh_offset + k * sizeof r, sizeof r);
          if (!apply_one (l, i, &r, error))
            return FALSE;
        }
    }
  return TRUE;
}

/* Global and weak functions defined in executable sections, by name. */
static gboolean
collect_functions (Loader *l, GHashTable *functions, GError **error)
{
  for (gsize i = 1; i < l->nsyms; i++)
    {
      Elf64_Sym sym;
      const char *name;
      read_symbol (l, i, &sym);
      int bind = ELF64_ST_BIND (sym.st_info);

      if (ELF64_ST_TYPE (sym.st_info) != STT_FUNC || (bind != STB_GLOBAL && bind != STB_WEAK)
          || sym.st_shndx == SHN_UNDEF || sym.st_shndx >= l->shnum
          || l->sec_offset[sym.st_shndx] == NOT_LOADED
          || segment_of (&l->sh[sym.st_shndx]) != SEG_TEXT)
        continue;
      name = symbol_name (l, &sym);
      if (name == NULL)
        return BAD ("symbol %" G_GSIZE_FORMAT ": name offset %u lies outside the string table", i,
                    sym.st_name);
      if (sym.st_value >= l->sh[sym.st_shndx].sh_size)
        return BAD ("function '%s' at offset %" G_GUINT64_FORMAT " lies past the end of '%s'", name,
                    (guint64) sym.st_value, section_name (l, sym.st_shndx));
      if (!g_hash_table_contains (functions, name))
        g_hash_table_insert (functions, g_strdup (name),
                             l->image + l->sec_offset[sym.st_shndx] + sym.st_value);
    }
  return TRUE;
}

static gboolean
protect_segments (Loader *l, GError **error)
{
  static const int prot[N_SEGS] = { PROT_READ | PROT_EXEC, PROT_READ, PROT_READ | PROT_WRITE };
  gsize ps = page_size ();

  for (int seg = 0; seg < N_SEGS; seg++)
    {
      gsize start = l->seg_start[seg];
      gsize end = (l->seg_end[seg] + ps - 1) & ~(ps - 1);

      if (end > start && mprotect (l->image + start, end - start, prot[seg]) != 0)
        return fail (error, MOROK_COMPILE_ERROR_MEMORY,
                     "mprotect of %" G_GSIZE_FORMAT " bytes failed: %s", end - start,
                     g_strerror (errno));
    }
  return TRUE;
}

static void
loader_clear (Loader *l)
{
  g_free (l->sh);
  g_free (l->sec_offset);
  g_free (l->got_slot);
  if (l->image != NULL)
    munmap (l->image, l->image_size);
}

MorokObject *
morok_object_load (const guint8 *data, gsize size, GError **error)
{
  return morok_object_load_full (data, size, NULL, NULL, error);
}

MorokObject *
morok_object_load_full (const guint8 *data, gsize size, const MorokKernelLib *lib, gpointer hint,
                        GError **error)
{
  Loader l = { .data = data, .size = size, .lib = lib };
  g_autoptr (GHashTable) functions = NULL;
  MorokObject *obj;

  g_return_val_if_fail (data != NULL || size == 0, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!check_header (&l, error) || !check_sections (&l, error)
      || !check_relocation_sections (&l, error) || !lay_out (&l, error))
    goto failed;

  l.image = mmap (hint, l.image_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (l.image == MAP_FAILED)
    {
      l.image = NULL;
      fail (error, MOROK_COMPILE_ERROR_MEMORY, "mmap of %" G_GSIZE_FORMAT " bytes failed: %s",
            l.image_size, g_strerror (errno));
      goto failed;
    }
  /* .bss and the gaps stay as mmap gave them: zero. */
  for (guint i = 0; i < l.shnum; i++)
    if (l.sec_offset[i] != NOT_LOADED && l.sh[i].sh_type != SHT_NOBITS)
      memcpy (l.image + l.sec_offset[i], data + l.sh[i].sh_offset, l.sh[i].sh_size);

  functions = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  if (!apply_relocations (&l, error) || !collect_functions (&l, functions, error)
      || !protect_segments (&l, error))
    goto failed;

  obj = g_new0 (MorokObject, 1);
  obj->image = g_steal_pointer (&l.image);
  obj->image_size = l.image_size;
  obj->functions = g_steal_pointer (&functions);
  loader_clear (&l);
  return obj;

failed:
  loader_clear (&l);
  return NULL;
}

gpointer
morok_object_lookup (MorokObject *obj, const char *name, GError **error)
{
  gpointer fn;

  g_return_val_if_fail (obj != NULL, NULL);
  g_return_val_if_fail (name != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  fn = g_hash_table_lookup (obj->functions, name);
  if (fn == NULL)
    fail (error, MOROK_COMPILE_ERROR_NOT_FOUND, "no global function '%s' in the kernel object",
          name);
  return fn;
}

void
morok_object_free (MorokObject *obj)
{
  if (obj == NULL)
    return;
  munmap (obj->image, obj->image_size);
  g_hash_table_unref (obj->functions);
  g_free (obj);
}
