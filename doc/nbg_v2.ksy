meta:
  id: nbg_v2
  title: VeriSilicon NBG v2 (Network Binary Graph, version 0x00020000)
  file-extension: nb
  license: MIT
  endian: le
  bit-endian: le
doc: |
  NBG v2 as nbgkit reads it (doc/format-v2.md; graph records in
  doc/graph.md).  Every field carries the field map's public name
  (-nbg-name), parser key (-nbg-key, -nbg-alias) and structure
  (-nbg-structure on its type): tests/check_ksy.py compares them with
  `nbg fields --json`, and decodes the corpus with this description.
  Only the structure is described; the rules (checksums, bounds, overlap)
  are the parser's (doc/format-v2.md, section 14).  64-bit values are two
  32-bit words, composed by the instances.
seq:
  - id: header
    type: header
instances:
  sub_header:
    pos: header.sub_header_offset
    type: sub_header
  directory:
    pos: sub_header.sh_offset
    size: sub_header.sh_size
    type: section_header
    repeat: expr
    repeat-expr: sub_header.sh_count
types:
  header:
    -nbg-structure: header
    seq:
      - {id: magic, contents: VPMN, -nbg-name: 'magic[4]', -nbg-key: magic}
      - {id: version, type: u4, -nbg-name: version, -nbg-key: version}
      - {id: target, type: u4, -nbg-name: target, -nbg-key: target, -nbg-alias: product}
      - {id: crc_sum, type: u4, -nbg-name: crc_sum, -nbg-key: crc32}
      - {id: total_size_low, type: u4, -nbg-name: total_size_low, -nbg-key: declared_file_size}
      - {id: total_size_high, type: u4, -nbg-name: total_size_high, -nbg-key: declared_file_size}
      - {id: sub_header_offset, type: u4, -nbg-name: sub_header_offset, -nbg-key: sub_header_offset}
      - {id: sub_header_size, type: u4, -nbg-name: sub_header_size, -nbg-key: sub_header_size}
      - {id: sub_header_count, type: u4, -nbg-name: sub_header_count, -nbg-key: sub_header_count}
      - {id: class_bit, type: b1, -nbg-name: class, -nbg-key: class}
      - {id: reserved1, type: b31, -nbg-name: reserved1, -nbg-key: reserved.class_word_reserved_bits}
      - {id: reserved2, type: u4, -nbg-name: reserved2, -nbg-key: reserved.reserved2}
      - {id: reserved3, type: u4, -nbg-name: reserved3, -nbg-key: reserved.reserved3}
    instances:
      declared_file_size:
        value: total_size_low + total_size_high * 4294967296
  sub_header:
    -nbg-structure: sub_header
    seq:
      - {id: sh_offset, type: u4, -nbg-name: sh_offset, -nbg-key: section_headers_offset}
      - {id: sh_size, type: u4, -nbg-name: sh_size, -nbg-key: section_header_size}
      - {id: sh_count, type: u4, -nbg-name: sh_count, -nbg-key: section_header_count}
  section_header:
    -nbg-structure: section_header
    seq:
      - {id: sd_type, type: u4, enum: section_type, -nbg-name: sd_type, -nbg-key: type}
      - {id: sd_offset_low, type: u4, -nbg-name: sd_offset_low, -nbg-key: offset}
      - {id: sd_offset_high, type: u4, -nbg-name: sd_offset_high, -nbg-key: offset}
      - {id: sd_size_low, type: u4, -nbg-name: sd_size_low, -nbg-key: size}
      - {id: sd_size_high, type: u4, -nbg-name: sd_size_high, -nbg-key: size}
      - {id: sd_addr_low, type: u4, -nbg-name: sd_addr_low, -nbg-key: load_address}
      - {id: sd_addr_high, type: u4, -nbg-name: sd_addr_high, -nbg-key: load_address}
      - {id: sd_alignsize, type: u4, -nbg-name: sd_alignsize, -nbg-key: alignment}
      - {id: sd_entsize, type: u4, -nbg-name: sd_entsize, -nbg-key: entry_size, -nbg-alias: stride}
      - {id: reserved1, type: u4, -nbg-name: reserved1, -nbg-key: 'reserved_words[0]'}
      - {id: reserved2, type: u4, -nbg-name: reserved2, -nbg-key: 'reserved_words[1]'}
    instances:
      offset:
        value: sd_offset_low + sd_offset_high * 4294967296
      size:
        value: sd_size_low + sd_size_high * 4294967296
      # The payload, read as its records when the section holds records of a
      # known kind and declares their size; other sections stay bytes.
      body:
        io: _root._io
        pos: offset
        size: size
        type:
          switch-on: 'sd_entsize == 0 ? section_type::none : sd_type'
          cases:
            'section_type::input': records_io
            'section_type::output': records_io
            'section_type::layer': records_layer
            'section_type::operations': records_operation
            'section_type::sh': records_sh_operation
            'section_type::patch': records_patch
            'section_type::sw': records_sw_operation
            'section_type::hwinitoperations': records_hw_init_operation
            'section_type::ppu_param': records_ppu_param
            'section_type::coef_header_table': records_table_entry
            'section_type::icdt': records_table_entry
            'section_type::coef_data_table': records_table_entry
            'section_type::ppu_instr_table': records_table_entry
            'section_type::loadstate_table': records_table_entry
            'section_type::dynaio_table': records_dynaio_entry
            'section_type::network_info': network_info
            'section_type::memory_pool': memory_pool
            'section_type::vip_sram': vip_sram
            'section_type::axi_sram': axi_sram
            'section_type::checksum': records_checksum
  records_io:
    seq:
      - {id: records, type: io, size: _parent.sd_entsize, repeat: eos}
  records_layer:
    seq:
      - {id: records, type: layer, size: _parent.sd_entsize, repeat: eos}
  records_operation:
    seq:
      - {id: records, type: operation, size: _parent.sd_entsize, repeat: eos}
  records_sh_operation:
    seq:
      - {id: records, type: sh_operation, size: _parent.sd_entsize, repeat: eos}
  records_patch:
    seq:
      - {id: records, type: patch, size: _parent.sd_entsize, repeat: eos}
  records_sw_operation:
    seq:
      - {id: records, type: sw_operation, size: _parent.sd_entsize, repeat: eos}
  records_hw_init_operation:
    seq:
      - {id: records, type: hw_init_operation, size: _parent.sd_entsize, repeat: eos}
  records_ppu_param:
    seq:
      - {id: records, type: ppu_param, size: _parent.sd_entsize, repeat: eos}
  records_table_entry:
    seq:
      - {id: records, type: table_entry, size: _parent.sd_entsize, repeat: eos}
  records_dynaio_entry:
    seq:
      - {id: records, type: dynaio_entry, size: _parent.sd_entsize, repeat: eos}
  records_checksum:
    seq:
      - {id: records, type: checksum_record, size: _parent.sd_entsize, repeat: eos}
  io:
    -nbg-structure: io
    seq:
      - {id: dim_count, type: u4, -nbg-name: dim_count, -nbg-key: dimension_count}
      - {id: dim_size, type: u4, repeat: expr, repeat-expr: 6, -nbg-name: 'dim_size[6]', -nbg-key: dimensions}
      - {id: data_format, type: u4, -nbg-name: data_format, -nbg-key: data_format}
      - {id: data_type, type: u4, -nbg-name: data_type, -nbg-key: data_type}
      - {id: quant_format, type: u4, -nbg-name: quant_format, -nbg-key: quantization.format}
      - {id: quant_data, size: 8, -nbg-name: quant_data, -nbg-key: quantization.raw_words}
      - {id: name, type: strz, size: 64, encoding: ASCII, -nbg-name: name, -nbg-key: name}
    instances:
      # the quant_data union: word 0 the fixed-point position (1) or the
      # affine scale (2), word 1 the affine zero point
      fixed_point_pos:
        pos: 0x28
        type: s4
      scale:
        pos: 0x28
        type: f4
      zero_point:
        pos: 0x2c
        type: s4
  network_info:
    -nbg-structure: network_info
    seq:
      - {id: name, type: strz, size: 64, encoding: ASCII, -nbg-name: name, -nbg-key: network_info.name}
      - {id: input_count, type: u4, -nbg-name: input_count, -nbg-key: input_count}
      - {id: output_count, type: u4, -nbg-name: output_count, -nbg-key: output_count}
      - {id: layer_count, type: u4, -nbg-name: layer_count, -nbg-key: layer_count}
      - {id: abs_op_count, type: u4, -nbg-name: abs_op_count, -nbg-key: absolute_operation_count}
      - {id: operation_count, type: u4, -nbg-name: operation_count, -nbg-key: operation_count}
      - {id: core_count, type: u4, -nbg-name: core_count, -nbg-key: core_count}
      - {id: address_width, type: u4, -nbg-name: address_width, -nbg-key: address_width}
      - {id: attribute, type: u4, -nbg-name: attribute, -nbg-key: attribute}
      - {id: vsi_reserved, type: u4, repeat: expr, repeat-expr: 31, -nbg-name: 'vsi_reserved[31]', -nbg-key: vsi_reserved}
    instances:
      attribute_bits:
        pos: 0x5c
        type: network_info_attribute
  network_info_attribute:
    -nbg-structure: network_info
    seq:
      - {id: change_ppu_param, type: b1, -nbg-name: attribute.change_ppu_param, -nbg-key: attribute_bits.change_ppu_param}
      - {id: nn_cmd_size, type: b2, -nbg-name: attribute.nn_cmd_size, -nbg-key: attribute_bits.nn_command_size_code}
      - {id: tp_cmd_size, type: b2, -nbg-name: attribute.tp_cmd_size, -nbg-key: attribute_bits.tp_command_size_code}
      - {id: support_dma, type: b2, -nbg-name: attribute.support_dma, -nbg-key: attribute_bits.dma_support_code}
      - {id: reserved, type: b25, -nbg-name: attribute.reserved, -nbg-key: attribute_bits.reserved}
  memory_pool:
    -nbg-structure: memory_pool
    seq:
      - {id: size_low, type: u4, -nbg-name: size_low, -nbg-key: memory_pool_bytes}
      - {id: size_high, type: u4, -nbg-name: size_high, -nbg-key: memory_pool_bytes}
    instances:
      memory_pool_bytes:
        value: size_low + size_high * 4294967296
  vip_sram:
    -nbg-structure: vip_sram
    seq:
      - {id: size, type: u4, -nbg-name: size, -nbg-key: vip_sram_bytes}
  axi_sram:
    -nbg-structure: axi_sram
    seq:
      - {id: size, type: u4, -nbg-name: size, -nbg-key: axi_sram_bytes}
  checksum_record:
    -nbg-structure: checksum_record
    seq:
      - {id: sd_type, type: u4, enum: section_type, -nbg-name: sd_type, -nbg-key: section_type}
      - {id: checksum_value, type: u4, -nbg-name: checksum_value, -nbg-key: stored}
  dynaio_entry:
    -nbg-structure: dynaio_entry
    seq:
      - {id: offset, type: u4, -nbg-name: offset, -nbg-key: offset}
      - {id: size, type: u4, -nbg-name: size, -nbg-key: size}
  layer:
    -nbg-structure: layer
    seq:
      - {id: name, type: strz, size: 64, encoding: ASCII, -nbg-name: name, -nbg-key: name}
      - {id: node_id, type: u4, -nbg-name: node_id, -nbg-key: node_id}
      - {id: operation_count, type: u4, -nbg-name: operation_count, -nbg-key: operation_count}
      - {id: uid, type: u4, if: _io.size >= 76, -nbg-name: uid, -nbg-key: uid}
  operation:
    -nbg-structure: operation
    seq:
      - {id: type, type: u4, -nbg-name: type, -nbg-key: type}
      - {id: index, type: u4, -nbg-name: index, -nbg-key: index}
      - {id: layer_id, type: u4, -nbg-name: layer_id, -nbg-key: layer_id}
      - {id: state_id, type: u4, -nbg-name: state_id, -nbg-key: state_id}
      - {id: patch_index, type: u4, -nbg-name: patch_index, -nbg-key: patch_index}
      - {id: patch_count, type: u4, -nbg-name: patch_count, -nbg-key: patch_count}
      - {id: preempt_word, type: u4, if: _io.size >= 28, -nbg-name: 'preempt:4 | abs_share_id:28', -nbg-key: preempt_word}
      - {id: abs_op_id, type: u4, if: _io.size >= 32, -nbg-name: abs_op_id, -nbg-key: abs_op_id}
    instances:
      preempt_bits:
        pos: 0x18
        type: operation_preempt
        if: _io.size >= 28
  operation_preempt:
    -nbg-structure: operation
    seq:
      - {id: preempt, type: b4, -nbg-name: preempt, -nbg-key: preempt}
      - {id: abs_share_id, type: b28, -nbg-name: abs_share_id, -nbg-key: abs_share_id}
  patch:
    -nbg-structure: patch
    seq:
      - {id: type, type: u4, -nbg-name: type, -nbg-key: type}
      - {id: dest_offset, type: u4, -nbg-name: dest_offset, -nbg-key: dest_offset}
      - {id: source_type, type: u4, -nbg-name: source_type, -nbg-key: source_type}
      - {id: index, type: s4, -nbg-name: index, -nbg-key: index}
      - {id: src_offset, type: u4, -nbg-name: src_offset, -nbg-key: src_offset}
      - {id: transformed, type: u4, -nbg-name: transformed, -nbg-key: transformed}
      - {id: name, type: u4, if: _io.size >= 28, -nbg-name: name, -nbg-key: name}
      - {id: dest_offset_h, type: u4, if: _io.size >= 40, -nbg-name: dest_offset_h, -nbg-key: dest_offset_h}
      - {id: src_offset_h, type: u4, if: _io.size >= 40, -nbg-name: src_offset_h, -nbg-key: src_offset_h}
      - {id: mask_h, type: u4, if: _io.size >= 40, -nbg-name: mask_h, -nbg-key: mask_h}
  sh_operation:
    -nbg-structure: sh_operation
    seq:
      - {id: instr_index, type: u4, -nbg-name: instr_index, -nbg-key: instr_index}
      - {id: ppu_param_index, type: u4, if: _io.size >= 8, -nbg-name: ppu_param_index, -nbg-key: ppu_param_index}
  sw_operation:
    -nbg-structure: sw_operation
    seq:
      - {id: sw_operation_type, type: u4, -nbg-name: sw_peration_type, -nbg-key: sw_operation_type}
      - {id: name, type: strz, size: 64, encoding: ASCII, if: _io.size >= 68, -nbg-name: name, -nbg-key: name}
  hw_init_operation:
    -nbg-structure: hw_init_operation
    seq:
      - {id: state_id, type: u4, -nbg-name: state_id, -nbg-key: state_id}
      - {id: patch_index, type: u4, -nbg-name: patch_index, -nbg-key: patch_index}
      - {id: patch_count, type: u4, -nbg-name: patch_count, -nbg-key: patch_count}
  ppu_param:
    -nbg-structure: ppu_param
    seq:
      - {id: global_offset_x, type: u4, -nbg-name: global_offset_x, -nbg-key: global_offset_x}
      - {id: global_offset_y, type: u4, -nbg-name: global_offset_y, -nbg-key: global_offset_y}
      - {id: global_offset_z, type: u4, -nbg-name: global_offset_z, -nbg-key: global_offset_z}
      - {id: global_scale_x, type: u4, -nbg-name: global_scale_x, -nbg-key: global_scale_x}
      - {id: global_scale_y, type: u4, -nbg-name: global_scale_y, -nbg-key: global_scale_y}
      - {id: global_scale_z, type: u4, -nbg-name: global_scale_z, -nbg-key: global_scale_z}
      - {id: group_size_x, type: u4, -nbg-name: group_size_x, -nbg-key: group_size_x}
      - {id: group_size_y, type: u4, -nbg-name: group_size_y, -nbg-key: group_size_y}
      - {id: group_size_z, type: u4, -nbg-name: group_size_z, -nbg-key: group_size_z}
      - {id: group_count_x, type: u4, -nbg-name: group_count_x, -nbg-key: group_count_x}
      - {id: group_count_y, type: u4, -nbg-name: group_count_y, -nbg-key: group_count_y}
      - {id: group_count_z, type: u4, -nbg-name: group_count_z, -nbg-key: group_count_z}
  table_entry:
    -nbg-structure: table_entry
    seq:
      - {id: offset, type: u4, -nbg-name: offset, -nbg-key: offset}
      - {id: size, type: u4, -nbg-name: size, -nbg-key: size}
enums:
  section_type:
    0: none
    1: input
    2: output
    3: layer
    4: operations
    5: coef_header_table
    6: coef_header
    7: nn
    8: tp
    9: sh
    10: patch
    11: layer_param
    12: sw
    13: hwinitoperations
    14: icdt
    15: icd
    16: ppu_param
    17: opsync
    18: dma_sbi_info
    19: ppu_instr
    20: dynaio
    21: loadstate
    22: dma_sbi_addition
    23: coef_data_table
    24: coef_data
    25: ppu_instr_table
    26: dynaio_table
    27: loadstate_table
    28: layer_dump_operation
    29: layer_dump_outputs
    30: layer_dump_patch_data
    31: layer_dump_instr_table
    32: layer_dump_instr
    33: layer_dump_loadstate_table
    34: layer_dump_loadstate
    35: network_info
    36: customer_data
    37: memory_pool
    38: vip_sram
    39: axi_sram
    40: checksum
